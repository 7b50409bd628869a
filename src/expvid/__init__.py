"""expvid: build, verify and run scientific-experiment video benchmarks."""

__version__ = "0.1.0"
