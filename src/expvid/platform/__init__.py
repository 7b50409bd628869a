"""expvid.platform"""
