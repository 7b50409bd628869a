"""SFE (Scientists' First Exam): scientific image questions in English and Chinese.

`SFESuite` runs it as the paper does (appendix D prompts, appendix E 0-10 judge, BERTScore F1 for
open questions, greedy box IoU for E011/E012, pass@k from n samples); `load_sfe` reads either
language set; `make_sfe_sample` writes a small set in the published shapes.
"""

from expvid.suites.sfe.loader import load_sfe
from expvid.suites.sfe.prompts import build_prompt
from expvid.suites.sfe.sample import make_sfe_sample
from expvid.suites.sfe.suite import SFESuite

__all__ = ["SFESuite", "build_prompt", "load_sfe", "make_sfe_sample"]
