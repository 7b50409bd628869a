"""expvid.scoring"""
