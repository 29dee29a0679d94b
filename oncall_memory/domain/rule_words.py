"""A rule's name and expression read as words (issue 82), for an alert that carries little else.

Many products' generated rules fire with their name as the only text (`summary` repeats it), its labels
(`cluster: …, instance: …`) and the link to the expression in `generatorURL`. The name is one token the
word search cannot find in a reference page and the model reads as word pieces; the expression names the
metric and, in its label matchers, what state it watches (`state="read_only"`, `name="OSD_NEARFULL"`). Read as
words, they say what broke:

- a name is split at `_`, `-`, `.` and its CamelCase humps, keeping an abbreviation whole (`TiKV`, `MySQL`,
  `GRPC`): `TiKV_raftstore_thread_cpu_too_high` is "TiKV raftstore thread cpu too high",
  `etcdHighNumberOfFailedGRPCRequests` "etcd High Number Of Failed GRPC Requests";
- the expression gives its metrics' names split the same way, and the values its equality matchers ask for,
  less the labels that say where (`job`, `instance`, `namespace`, ...) and the histogram's `le`;
- what a template could not fill (`<no value>`, `<error expanding template …>`) and a text that only lists
  labels and values (`cluster: prod, instance: 10.0.0.1:20180, values: 1`) say nothing.

Linear in its input: every pattern here is one pass with no nested repetition.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from .promql import MAX_EXPR, MAX_LINK, metric_names

_PARTS = re.compile(r"[A-Za-z0-9]+")
# CamelCase humps: an abbreviation before a capitalised word (`GRPC` in `GRPCRequests`), a capitalised or
# lower-case word, an abbreviation, digits.
_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+[a-z]*")
# Labels that say where, not what: their values are the alert's facts, not its words.
WHERE = frozenset(
    "job instance namespace cluster pod container node service endpoint region zone env environment datacenter "
    "host hostname app prometheus le quantile".split()
)
_MATCHER = re.compile(r"""\b([a-zA-Z_][a-zA-Z0-9_]*)\s*=~?\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""")
_LEFTOVER = re.compile(r"<no value>|<error expanding template[^>]*>", re.I)
_PAIR = re.compile(r"^\s*[\w.-]+\s*[:=]\s*[^,;=]{0,80}$")


def words_of_name(name: str) -> str:
    """`name` as words: split at separators and CamelCase, an abbreviation kept whole."""
    out: list[str] = []
    for part in _PARTS.findall(name[:300]):
        humps = _HUMPS.findall(part)
        joined: list[str] = []
        for hump in humps:
            # A two-letter capitalised hump before an abbreviation is one name with it (`Ti`+`KV`, `My`+`SQL`).
            if (
                joined
                and len(joined[-1]) == 2
                and joined[-1][0].isupper()
                and joined[-1][1].islower()
                and hump.isupper()
            ):
                joined[-1] += hump
            else:
                joined.append(hump)
        out += joined
    return " ".join(out)


def expression_words(generator_url: str | None) -> str:
    """The words of the expression in a ruler's `generatorURL`: its metrics' names as words, and the values
    its equality matchers ask for (not where: `job`, `instance`, ...), each once."""
    if not generator_url or len(generator_url) > MAX_LINK:
        return ""
    try:
        query = parse_qs(urlsplit(generator_url).query, max_num_fields=20)
    except ValueError:
        return ""
    found: list[str] = []
    for key, values in query.items():
        if not re.fullmatch(r"g\d+\.expr", key):
            continue
        for expr in values:
            expr = expr[:MAX_EXPR]
            found += [words_of_name(m) for m in metric_names(expr)]
            for m in _MATCHER.finditer(expr):
                label, value = m.group(1), m.group(2) if m.group(2) is not None else m.group(3)
                if label.lower() not in WHERE and value and not value.startswith(("$", "{{")):
                    found += [words_of_name(v) for v in value.split("|") if v and not v.startswith(".")]
    return " ".join(dict.fromkeys(w for w in found if w))


def without_leftovers(text: str) -> str:
    """`text` without what a template could not fill (`<no value>`, `<error expanding template …>`)."""
    return " ".join(_LEFTOVER.sub(" ", text).split()) if "<" in text else text


def says_something(text: str) -> bool:
    """Does `text` say more than labels and their values (`cluster: prod, instance: 10.0.0.1:20180,
    values: 1`)? A text of two words or more that is not only such pairs does."""
    text = without_leftovers(text)
    if len(re.findall(r"[^\W\d_]{2,}", text)) < 2:
        return False
    parts = [p for p in re.split(r"[,;\n]", text) if p.strip()]
    return not all(_PAIR.match(p) for p in parts)
