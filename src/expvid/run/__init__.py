"""expvid.run"""
