"""expvid.media"""
