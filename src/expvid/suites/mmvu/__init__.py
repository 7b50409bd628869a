"""MMVU: expert-level multi-discipline video questions (Yale NLP, 2025), the fifth suite.

Written only against the public plug-in API (`expvid.suites.api`), as a package outside expvid
would be: `MMVUSuite` (loader, prompts, judge, table, reference rows, Hub layout, lmms-eval
interop) and `make_mmvu_sample` (a small set in the published shapes).
"""

from expvid.suites.mmvu.sample import make_mmvu_sample
from expvid.suites.mmvu.suite import MMVUSuite

__all__ = ["MMVUSuite", "make_mmvu_sample"]
