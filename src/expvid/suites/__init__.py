"""expvid.suites"""
