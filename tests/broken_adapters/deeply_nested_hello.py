"""Answers hello with an implementation nested 1,000 objects deep."""

import json
import sys

if __name__ == "__main__":
    request = json.loads(sys.stdin.readline())
    depth = 1000
    nested = '{"a":' * depth + "1" + "}" * depth
    sys.stdout.write(f'{{"id":{request["id"]},"ok":true,"protocol":1,"implementation":{nested}}}\n')
    sys.stdout.flush()
    sys.stdin.read()
