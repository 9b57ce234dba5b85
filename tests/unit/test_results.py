"""MCP tool results -> ToolResult: text, attachments, structured content, errors, the cap."""

from __future__ import annotations

import base64
import json
import re

import mcp_types as types
import pytest

from agent_ls.core.tools import Attachment, ToolResult
from agent_ls.mcp.results import DEFAULT_MAX_OUTPUT_CHARS, cap_text, convert_call_result, convert_content

PNG = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()  # 100 bytes
WAV = base64.b64encode(b"RIFF" + b"\0" * 296).decode()  # 300 bytes
BLOB = base64.b64encode(b"\x00\x01\x02" * 100).decode()  # 300 bytes


def text(t: str) -> types.TextContent:
    return types.TextContent(type="text", text=t)


def result(*blocks: types.ContentBlock, structured=None, is_error: bool | None = None) -> types.CallToolResult:
    kwargs: dict = {"content": list(blocks)}
    if structured is not None:
        kwargs["structuredContent"] = structured
    if is_error is not None:
        kwargs["isError"] = is_error
    return types.CallToolResult(**kwargs)


def image() -> types.ImageContent:
    return types.ImageContent(type="image", data=PNG, mimeType="image/png")


def audio() -> types.AudioContent:
    return types.AudioContent(type="audio", data=WAV, mimeType="audio/wav")


def text_resource(uri: str = "file:///project/README.md", body: str = "# Title\nbody") -> types.EmbeddedResource:
    return types.EmbeddedResource(
        type="resource", resource=types.TextResourceContents(uri=uri, text=body, mimeType="text/markdown")
    )


def blob_resource(mime: str | None = "application/octet-stream") -> types.EmbeddedResource:
    return types.EmbeddedResource(
        type="resource", resource=types.BlobResourceContents(uri="file:///data.bin", blob=BLOB, mimeType=mime)
    )


def link(description: str | None = None) -> types.ResourceLink:
    return types.ResourceLink(type="resource_link", name="report.pdf", uri="https://example.com/report.pdf",
                              mimeType="application/pdf", description=description)


# text ------------------------------------------------------------------


def test_single_text() -> None:
    out = convert_call_result(result(text("hello")))
    assert isinstance(out, ToolResult)
    assert out.content == "hello"
    assert out.is_error is False
    assert out.attachments == ()
    assert out.structured is None
    assert out.truncated_chars == 0


def test_text_blocks_are_joined_in_order() -> None:
    out = convert_call_result(result(text("one"), text("two"), text("three")))
    assert out.content == "one\ntwo\nthree"


def test_text_is_kept_verbatim() -> None:
    body = "  indented\n\ttabs\r\nunicode ✓ 😀\n"
    assert convert_call_result(result(text(body))).content == body


def test_empty_result() -> None:
    out = convert_call_result(result())
    assert out.content == "(the tool returned no content)"
    assert out.attachments == ()


def test_empty_text_block() -> None:
    out = convert_call_result(result(text("")))
    assert out.content == "(the tool returned no content)"


# errors ----------------------------------------------------------------


def test_is_error_is_kept() -> None:
    out = convert_call_result(result(text("boom: file not found"), is_error=True))
    assert out.is_error is True
    assert out.content == "boom: file not found"


def test_is_error_false_and_absent() -> None:
    assert convert_call_result(result(text("x"), is_error=False)).is_error is False
    assert convert_call_result(result(text("x"))).is_error is False


def test_error_without_content_still_says_something() -> None:
    out = convert_call_result(result(is_error=True))
    assert out.is_error is True
    assert out.content


# attachments ------------------------------------------------------------


def test_image_is_an_attachment_with_a_note() -> None:
    out = convert_call_result(result(text("a chart:"), image()))
    assert out.attachments == (Attachment(kind="image", mime_type="image/png", data=PNG),)
    lines = out.content.split("\n")
    assert lines[0] == "a chart:"
    assert lines[1].startswith("[image: image/png, ")
    assert "100 bytes" in lines[1]


def test_image_only_result_is_not_empty() -> None:
    out = convert_call_result(result(image()))
    assert out.content.startswith("[image: image/png")
    assert len(out.attachments) == 1


def test_audio_is_an_attachment_with_a_note() -> None:
    out = convert_call_result(result(audio()))
    assert out.attachments == (Attachment(kind="audio", mime_type="audio/wav", data=WAV),)
    assert out.content.startswith("[audio: audio/wav, ")
    assert "300 bytes" in out.content


def test_embedded_text_resource_is_inlined_and_kept() -> None:
    out = convert_call_result(result(text_resource()))
    (att,) = out.attachments
    assert att == Attachment(kind="resource", mime_type="text/markdown", text="# Title\nbody",
                             uri="file:///project/README.md")
    assert out.content == "[resource file:///project/README.md]\n# Title\nbody"


def test_embedded_blob_resource_is_an_attachment_with_a_note() -> None:
    out = convert_call_result(result(blob_resource()))
    (att,) = out.attachments
    assert att.kind == "resource"
    assert att.data == BLOB
    assert att.text is None
    assert att.uri == "file:///data.bin"
    assert att.mime_type == "application/octet-stream"
    assert out.content.startswith("[binary resource file:///data.bin: application/octet-stream, ")
    assert "300 bytes" in out.content


def test_blob_resource_without_a_mime_type() -> None:
    out = convert_call_result(result(blob_resource(mime=None)))
    assert "unknown type" in out.content
    assert out.attachments[0].mime_type is None


def test_resource_link_is_an_attachment_with_a_note() -> None:
    out = convert_call_result(result(link()))
    (att,) = out.attachments
    assert att == Attachment(kind="resource_link", mime_type="application/pdf",
                             uri="https://example.com/report.pdf", name="report.pdf")
    assert out.content == "[resource link: report.pdf <https://example.com/report.pdf>]"


def test_resource_link_with_description() -> None:
    out = convert_call_result(result(link("The quarterly report")))
    assert out.content == "[resource link: report.pdf <https://example.com/report.pdf> - The quarterly report]"


def test_mixed_content_keeps_order_and_everything() -> None:
    out = convert_call_result(result(text("start"), image(), text_resource(), audio(), blob_resource(), link(),
                                     text("end")))
    assert [a.kind for a in out.attachments] == ["image", "resource", "audio", "resource", "resource_link"]
    lines = out.content.split("\n")
    assert lines[0] == "start"
    assert lines[-1] == "end"
    order = [m.group(0) for m in re.finditer(r"\[(image|resource link|resource |audio|binary resource)", out.content)]
    assert order == ["[image", "[resource ", "[audio", "[binary resource", "[resource link"]


def test_convert_content_directly() -> None:
    texts, attachments = convert_content([text("a"), image()])
    assert texts[0] == "a"
    assert texts[1].startswith("[image:")
    assert [a.kind for a in attachments] == ["image"]
    assert convert_content([]) == ([], [])


def test_unknown_block_type_is_rendered_not_dropped() -> None:
    class FutureBlock:
        type = "hologram"

        def model_dump(self, **_: object) -> dict:
            return {"type": "hologram", "depth": 3}

    texts, attachments = convert_content([FutureBlock()])  # type: ignore[list-item]
    assert attachments == []
    assert texts == ['[hologram: {"type": "hologram", "depth": 3}]']


# structured content ------------------------------------------------------------


def test_structured_content_is_kept_with_text() -> None:
    out = convert_call_result(result(text('{"temp": 21}'), structured={"temp": 21}))
    assert out.structured == {"temp": 21}
    assert out.content == '{"temp": 21}'  # not repeated


def test_structured_content_only_is_rendered_as_json() -> None:
    data = {"temperature": 21.5, "city": "Zürich", "tags": ["a", "b"], "nested": {"ok": True, "none": None}}
    out = convert_call_result(result(structured=data))
    assert out.structured == data
    assert json.loads(out.content) == data
    assert "Zürich" in out.content  # not \u-escaped
    assert out.content != "(the tool returned no content)"


def test_structured_content_with_blank_text_is_rendered() -> None:
    out = convert_call_result(result(text("  \n"), structured={"a": 1}))
    assert json.loads(out.content.split("\n", 1)[1]) == {"a": 1}


def test_structured_content_with_only_an_image_is_rendered() -> None:
    out = convert_call_result(result(image(), structured={"width": 10}))
    assert out.structured == {"width": 10}
    assert '"width": 10' in out.content
    assert len(out.attachments) == 1


def test_non_object_structured_content_is_wrapped() -> None:
    out = convert_call_result(result(structured=[1, 2, 3]))
    assert out.structured == {"result": [1, 2, 3]}
    assert json.loads(out.content) == [1, 2, 3]


def test_empty_structured_content_is_still_data() -> None:
    out = convert_call_result(result(structured={}))
    assert out.structured == {}
    assert out.content == "{}"


def test_structured_error() -> None:
    out = convert_call_result(result(structured={"error": "nope"}, is_error=True))
    assert out.is_error is True
    assert out.structured == {"error": "nope"}


def test_from_a_wire_payload() -> None:
    payload = {
        "content": [{"type": "text", "text": "hi"}, {"type": "image", "data": PNG, "mimeType": "image/png"}],
        "structuredContent": {"x": 1},
        "isError": True,
    }
    out = convert_call_result(types.CallToolResult.model_validate(payload))
    assert out.is_error is True
    assert out.structured == {"x": 1}
    assert out.content.startswith("hi\n[image: image/png")


# the cap ---------------------------------------------------------------


def test_nothing_is_cut_at_or_below_the_limit() -> None:
    for n in (0, 1, 99, 100):
        body = "x" * n
        out = convert_call_result(result(text(body)) if n else result(text("y")), max_chars=100)
        assert out.truncated_chars == 0
        assert "truncated" not in out.content
    assert cap_text("x" * 100, 100) == ("x" * 100, 0)
    assert cap_text("", 100) == ("", 0)


def test_the_marker_says_how_much_was_cut() -> None:
    body = "".join(f"{i:05d}\n" for i in range(1000))  # 6000 characters
    out = convert_call_result(result(text(body)), max_chars=1000)
    assert out.truncated_chars == 5000
    m = re.search(r"\[\.\.\. output truncated by agent-ls: (\d+) of (\d+) characters cut \(limit (\d+)\)", out.content)
    assert m is not None
    assert (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (5000, 6000, 1000)


def test_the_cut_keeps_head_and_tail() -> None:
    body = "H" * 5000 + "M" * 5000 + "T" * 5000
    capped, cut = cap_text(body, 1000)
    assert cut == 14000
    assert capped.startswith("H" * 750)
    assert capped.endswith("T" * 250)
    assert "M" not in capped
    # exactly max_chars of the original survive, plus the marker
    kept = capped.replace(re.search(r"\n\n\[\.\.\..*?\]\n\n", capped, re.S).group(0), "")  # type: ignore[union-attr]
    assert len(kept) == 1000
    assert len(body) - len(kept) == cut


def test_one_character_over_the_limit_is_reported() -> None:
    capped, cut = cap_text("x" * 101, 100)
    assert cut == 1
    assert "1 of 101 characters cut" in capped


def test_tiny_limits() -> None:
    capped, cut = cap_text("abcdef", 1)
    assert cut == 5
    assert capped.endswith("f")
    capped, cut = cap_text("abcdef", 4)
    assert cut == 2
    assert capped.startswith("abc")
    assert capped.endswith("f")


def test_zero_or_negative_limit_means_no_cap() -> None:
    assert cap_text("x" * 10, 0) == ("x" * 10, 0)
    assert cap_text("x" * 10, -1) == ("x" * 10, 0)


def test_default_limit() -> None:
    big = "y" * (DEFAULT_MAX_OUTPUT_CHARS + 10)
    out = convert_call_result(result(text(big)))
    assert out.truncated_chars == 10
    ok = "y" * DEFAULT_MAX_OUTPUT_CHARS
    assert convert_call_result(result(text(ok))).content == ok


def test_cap_applies_to_rendered_structured_content() -> None:
    data = {"rows": ["r" * 50 for _ in range(100)]}
    out = convert_call_result(result(structured=data), max_chars=500)
    assert out.truncated_chars > 0
    assert "characters cut" in out.content
    assert out.structured == data  # the data itself is not cut


def test_cap_does_not_touch_attachments() -> None:
    out = convert_call_result(result(text("z" * 1000), image()), max_chars=100)
    assert out.truncated_chars > 0
    assert out.attachments[0].data == PNG


@pytest.mark.parametrize("limit", [10, 57, 100, 333])
def test_cut_count_is_exact(limit: int) -> None:
    body = "abcdefghij" * 100
    capped, cut = cap_text(body, limit)
    assert cut == len(body) - limit
    assert f"{cut} of {len(body)} characters cut (limit {limit})" in capped


@pytest.mark.parametrize("size", [0, 1, 2, 3, 100, 101, 300])
def test_notes_report_the_decoded_size(size: int) -> None:
    data = base64.b64encode(b"\x01" * size).decode()
    out = convert_call_result(result(types.ImageContent(type="image", data=data, mimeType="image/gif")))
    assert f"image/gif, {size} bytes" in out.content


def test_structured_content_next_to_a_resource_is_rendered() -> None:
    out = convert_call_result(result(text_resource(), structured={"k": "v"}))
    assert out.content.startswith("[resource file:///project/README.md]")
    assert '"k": "v"' in out.content
