"""TinyQA: a tiny video QA benchmark, shipped as an expvid suite from its own package."""
