"""The request body is the JSON of the request, whatever the strings in it, with data URLs spliced in."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from expvid.models.openai_wire import Base64DataUrl, body_bytes, data_url, video_data_url
from expvid.models.types import ImagePart

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


@given(data=st.binary(max_size=64), mime=st.text(max_size=12) | st.sampled_from(["image/jpeg", "image/png"]))
def test_urls_made_here_are_spliced_only_when_every_character_is_safe(data: bytes, mime: str) -> None:
    """A URL built from a MIME type that would need escaping is not marked safe, and is escaped."""
    url = data_url(ImagePart(data=data, mime=mime))
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}],
    }
    assert json.loads(body_bytes(body)) == body
    if isinstance(url, Base64DataUrl):
        assert json.dumps(url)[1:-1] == url  # nothing in it to escape


def test_frames_as_a_video_are_marked_safe() -> None:
    frames = [ImagePart(data=bytes([i, 255, 0]), mime="image/jpeg") for i in range(3)]
    url = video_data_url(frames)
    assert (
        isinstance(url, Base64DataUrl) and url.startswith("data:video/jpeg;base64,") and url.count(",") == 3
    )
