import io

from conformance.adapter import serve


def test_adapter_answers_hello_and_bye():
    requests = b'{"id":1,"op":"hello","protocol":1}\n{"id":2,"op":"bye"}\n'
    out = io.BytesIO()
    assert serve(io.BytesIO(requests), out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(b'{"id":1,"ok":true,"protocol":1')
    assert lines[1] == b'{"id":2,"ok":true}'
