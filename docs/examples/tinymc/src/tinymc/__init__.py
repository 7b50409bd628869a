"""TinyMC: multiple choice from a parquet release, shipped as an expvid suite from its own package."""
