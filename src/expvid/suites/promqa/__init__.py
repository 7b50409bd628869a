"""ProMQA: open questions about cooking recordings, answered with the recipe, judged 0/1/2.

`ProMQASuite` runs it as the official code does (1 fps prefix of the recording thinned from the
end, recipe as DOT, text-only ternary judge, score = mean x 50); `load_promqa` reads the release;
`recipe_dot` renders a recipe graph; `make_promqa_sample` writes a small set in the published shapes.
"""

from expvid.suites.promqa.loader import load_promqa
from expvid.suites.promqa.prompts import build_prompt
from expvid.suites.promqa.recipe_dot import recipe_dot
from expvid.suites.promqa.sample import make_promqa_sample
from expvid.suites.promqa.suite import ProMQASuite

__all__ = ["ProMQASuite", "build_prompt", "load_promqa", "make_promqa_sample", "recipe_dot"]
