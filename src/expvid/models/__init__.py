"""expvid.models"""
