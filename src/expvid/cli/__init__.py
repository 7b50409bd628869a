"""expvid.cli"""
