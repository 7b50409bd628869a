"""ProMQA-style construction (`expvid build --recipe promqa`): see docs/build_promqa.md."""
