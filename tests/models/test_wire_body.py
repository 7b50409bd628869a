"""The request body is the JSON of the request, whatever the strings in it, with data URLs spliced in."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from expvid.models.openai_wire import body_bytes

URL = "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ=="


@given(texts=st.lists(st.text(), min_size=1, max_size=4), urls=st.lists(st.text() | st.just(URL), max_size=4))
def test_body_bytes_is_the_json_of_the_body(texts: list[str], urls: list[str]) -> None:
    parts = [{"type": "text", "text": text} for text in texts]
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in urls]
    parts.append({"type": "video_url", "video_url": {"url": URL + "," + URL[23:]}})
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": texts[0]}, {"role": "user", "content": parts}],
    }
    assert json.loads(body_bytes(body)) == body
