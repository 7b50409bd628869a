"""expvid.build"""
