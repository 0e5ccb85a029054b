"""Answers as the reference does, except one field of every answer to one op:
``rewritten_field.py OP FIELD JSON`` sets FIELD to the JSON text given (``ID`` in it stands
for the request's id, so ``ID.0`` echoes id 4 as ``4.0``), and ``-`` removes the field.

What a port writes when its JSON library turns integers into floats or booleans (a float64
number type, a truthy flag written as 1), or when it forgets a field.
"""

import json
import sys

from _common import serve


def rewriting(op: str, field: str, text: str):
    def fault(request, line, armed):
        if request.get("op") != op:
            return None
        answer = json.loads(line)
        if text == "-":
            answer.pop(field, None)
        else:
            answer[field] = json.loads(text.replace("ID", str(request.get("id"))))
        return json.dumps(answer).encode() + b"\n"

    return fault


if __name__ == "__main__":
    op, field, text = sys.argv[1:4]
    sys.exit(serve(rewriting(op, field, text), name=f"{op} answers with {field} {text}"))
