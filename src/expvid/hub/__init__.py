"""The Hugging Face Hub: fetch the suites' releases (`expvid data fetch`, `--data hf:`) and publish a
verified benchmark as a dataset repository (`expvid platform export --format hf`). See docs/hub.md.

Importing this package imports nothing heavy; huggingface_hub is imported by the functions that call it.
"""
