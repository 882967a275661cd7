"""Seeded, grammar-aware YAML documents for the differential test against
PyYAML.

Each document is built from YAML's grammar — block and flow collections at
any nesting, simple and explicit (`?`) keys, plain, quoted and block scalars
whose text is drawn from an alphabet rich in indicator characters, anchors,
aliases, tags, comments, document markers, merge keys, values PyYAML's
resolver reads as bool/int/float/null/timestamp — and then, for about half
of them, edited at one to three random places with a character YAML gives a
meaning to (an indicator, a tab, a line break, a BOM, a non-ASCII letter), so
that near-valid texts probe where PyYAML starts refusing.

Stdlib only; the same seed gives the same documents on every machine.
"""
import random

INDICATORS = "-?:,[]{}#&*!|>'\"%@`"
LETTERS = "abcxyzABZ019_."
SPECIAL = ["\t", "\ufeff", "é", "日", "😀", "\\", "~", "=", "<<", "\u00a0", "\x85", "\u2028"]
# Plain texts PyYAML's resolver turns into something other than a string,
# and near misses that stay strings.
RESOLVED = [
    "yes", "No", "ON", "off", "y", "n", "true", "False", "TRUE", "tRUE", "null", "Null", "~", "NULL",
    "010", "0o17", "0x1F", "0b101", "-0b11", "1_000", "+12", "-0", "0", "1:30", "190:20:30", "1:30.5",
    "1e3", "1.5e+3", "1.0", "-.5", ".5", "1.", "6.8523015e+5", "685.230_15e+03", "1_2.3", ".inf",
    "-.Inf", ".NaN", "+.inf", "1E3", "1e+3", "0.1e-2",
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2002-12-14",
    "2001-12-14T21:59:43Z", "2001-1-1", "2001-12-14 21:59:43.1234567", "2001-02-30",
    "=", "<<", "0x", "1__0", "0o", "._", "1:60", "-", "?x", ":x", "x:", "x#y", "x #y",
]
KEYS = ["a", "b", "key", "name", "default", "x y", "1", "true", "null", "<<", "k:v", "2001-12-14"]
TAGS = ["!!str", "!!str", "!!int", "!!float", "!!bool", "!!null", "!!binary", "!!timestamp", "!!seq", "!!map",
        "!custom", "!", "!!python/name:os.system", "!<tag:yaml.org,2002:str>"]
EDITS = list(INDICATORS) + ["\t", "\n", " ", "\ufeff", "\r\n", "\r", "é", "\\", "\x85"]


class Doc:
    def __init__(self, rnd):
        self.rnd = rnd
        self.anchors = []
        self.serial = 0

    def chance(self, p):
        return self.rnd.random() < p

    # --- scalars -----------------------------------------------------------

    def raw_text(self, lo=0, hi=8):
        rnd = self.rnd
        pieces = []
        for _ in range(rnd.randint(lo, hi)):
            r = rnd.random()
            if r < 0.7:
                pieces.append(rnd.choice(LETTERS))
            elif r < 0.84:
                pieces.append(rnd.choice(INDICATORS))
            elif r < 0.95:
                pieces.append(" ")
            else:
                pieces.append(rnd.choice(SPECIAL))
        return "".join(pieces)

    def plain(self, flow):
        r = self.rnd.random()
        if r < 0.35:
            return self.rnd.choice(RESOLVED)
        if r < 0.55:
            return self.rnd.choice(LETTERS[:-2]) + self.raw_text(0, 6)
        return self.raw_text(1, 8)

    def single(self):
        return "'" + self.raw_text(0, 8).replace("'", self.rnd.choice(["''", "'"])) + "'"

    def double(self):
        text = self.raw_text(0, 8)
        escapes = ["\\n", "\\t", "\\\\", '\\"', "\\x41", "\\u00e9", "\\U0001F600", "\\q", "\\x4", "\\ ", "\\/",
                   "\\0", "\\a", "\\e", "\\N", "\\_", "\\L", "\\P", "\\\n"]
        if self.chance(0.4):
            at = self.rnd.randrange(len(text) + 1)
            text = text[:at] + self.rnd.choice(escapes) + text[at:]
        return '"' + text.replace('"', self.rnd.choice(['\\"', '"'])) + '"'

    def block_scalar(self, indent):
        rnd = self.rnd
        header = rnd.choice(["|", ">", "|-", ">+", "|2", ">-", "|+", "|1-", "| #c"])
        lines = []
        for _ in range(rnd.randint(0, 3)):
            extra = rnd.choice(["", "", " ", "  ", "\t"])
            lines.append(" " * (indent + 2) + extra + self.raw_text(0, 6))
        if rnd.random() < 0.2:
            lines.append("")
        return header + ("\n" + "\n".join(lines) if lines else "")

    def scalar(self, flow, indent):
        r = self.rnd.random()
        if r < 0.5:
            return self.plain(flow)
        if r < 0.7:
            return self.single()
        if r < 0.9:
            return self.double()
        if flow:
            return self.plain(flow)
        return self.block_scalar(indent)

    def properties(self):
        parts = []
        if self.chance(0.12):
            self.serial += 1
            name = self.rnd.choice(["a", "b", "x1", "an-chor", "a_b", "a", "a.b", "é"]) + str(self.serial)
            self.anchors.append(name)
            parts.append("&" + name)
        if self.chance(0.1):
            parts.append(self.rnd.choice(TAGS))
        return " ".join(parts)

    def alias(self):
        if self.anchors and self.chance(0.8):
            return "*" + self.rnd.choice(self.anchors)
        return "*missing"

    # --- flow --------------------------------------------------------------

    def flow_node(self, depth):
        r = self.rnd.random()
        props = self.properties()
        if r < 0.08 and self.anchors:
            body = self.alias()
            props = ""
        elif depth < 4 and r < 0.3:
            body = self.flow_seq(depth + 1)
        elif depth < 4 and r < 0.45:
            body = self.flow_map(depth + 1)
        else:
            body = self.scalar(True, 0)
        return (props + " " + body).strip() if props else body

    def flow_seq(self, depth):
        rnd = self.rnd
        items = []
        for _ in range(rnd.randint(0, 4)):
            if self.chance(0.15):
                items.append(self.flow_key() + rnd.choice([": ", ":", " : "]) + self.flow_node(depth))
            elif self.chance(0.05):
                items.append("? " + self.flow_node(depth))
            else:
                items.append(self.flow_node(depth))
        sep = rnd.choice([", ", ",", " , ", ",\n  "])
        trailing = rnd.choice(["", "", ","])
        return "[" + sep.join(items) + (trailing if items else "") + "]"

    def flow_key(self):
        if self.chance(0.8):
            return self.rnd.choice(KEYS)
        return self.scalar(True, 0)

    def flow_map(self, depth):
        rnd = self.rnd
        items = []
        for _ in range(rnd.randint(0, 4)):
            r = rnd.random()
            if r < 0.1:
                items.append(self.flow_key())  # a key with no value
            elif r < 0.18:
                items.append("? " + self.flow_key() + " : " + self.flow_node(depth))
            else:
                items.append(self.flow_key() + rnd.choice([": ", ": ", ":", " : "]) + self.flow_node(depth))
        sep = rnd.choice([", ", ",", " ,", ",\n  "])
        trailing = rnd.choice(["", "", ","])
        return "{" + sep.join(items) + (trailing if items else "") + "}"

    # --- block -------------------------------------------------------------

    def block_value(self, indent, depth):
        """Text after `key:` or `- ` (starting with a space or a line break)."""
        rnd = self.rnd
        r = rnd.random()
        props = self.properties()
        lead = (" " + props) if props else ""
        if depth < 4 and r < 0.25:
            step = rnd.choice([2, 2, 4, 1])
            return lead + "\n" + self.block_map(indent + step, depth + 1)
        if depth < 4 and r < 0.4:
            step = rnd.choice([2, 0, 4]) if self.chance(0.5) else 2
            return lead + "\n" + self.block_seq(indent + step, depth + 1)
        if r < 0.48:
            return lead + " " + self.flow_node(depth)
        if r < 0.52 and self.anchors:
            return " " + self.alias()
        if r < 0.56:
            return lead  # empty: null
        return lead + " " + self.scalar(False, indent)

    def block_key(self):
        r = self.rnd.random()
        if r < 0.75:
            return self.rnd.choice(KEYS)
        if r < 0.85:
            return self.single() if self.chance(0.5) else self.double()
        return self.plain(False)

    def block_map(self, indent, depth):
        rnd = self.rnd
        pad = " " * indent
        lines = []
        for _ in range(rnd.randint(1, 4)):
            r = rnd.random()
            if r < 0.07:
                lines.append(pad + "? " + self.block_key() + "\n" + pad + ":" + self.block_value(indent, depth))
            elif r < 0.12 and self.anchors:
                lines.append(pad + "<<: " + self.alias())
            elif r < 0.16:
                lines.append(pad + "# " + self.raw_text(0, 5))
            else:
                key = self.block_key()
                lines.append(pad + key + rnd.choice([":", ":", " :"]) + self.block_value(indent, depth)
                             + (" # " + self.raw_text(0, 4) if self.chance(0.08) else ""))
        return "\n".join(lines)

    def block_seq(self, indent, depth):
        rnd = self.rnd
        pad = " " * indent
        lines = []
        for _ in range(rnd.randint(1, 4)):
            if depth < 4 and self.chance(0.2):
                # A compact mapping inside the item: `- key: value`.
                inner = self.block_map(indent + 2, depth + 1)
                lines.append(pad + "- " + inner[indent + 2:])
            else:
                lines.append(pad + "-" + self.block_value(indent, depth))
        return "\n".join(lines)

    def document(self):
        rnd = self.rnd
        r = rnd.random()
        if r < 0.55:
            body = self.block_map(0, 0)
        elif r < 0.7:
            body = self.block_seq(0, 0)
        elif r < 0.85:
            body = self.flow_node(0)
        else:
            body = self.scalar(False, 0)
        head = ""
        if self.chance(0.1):
            head = rnd.choice(["---\n", "--- ", "%YAML 1.1\n---\n", "%TAG !e! tag:e.com,2000:\n---\n", "\ufeff",
                               "# lead\n", "%YAML 1.2\n---\n", "%FOO bar\n---\n"])
        tail = ""
        if self.chance(0.06):
            tail = rnd.choice(["\n...", "\n---\n", "\n--- x", "\n...\n# end", "\n"])
        text = head + body + tail
        if self.chance(0.05):
            text = text.replace("\n", "\r\n")
        return text


def edit(rnd, text):
    for _ in range(rnd.randint(1, 3)):
        pos = rnd.randrange(len(text) + 1)
        ch = rnd.choice(EDITS)
        r = rnd.random()
        if r < 0.6 or not text:
            text = text[:pos] + ch + text[pos:]
        elif r < 0.8:
            text = text[:pos] + text[pos + 1:]
        else:
            text = text[:pos] + ch + text[pos + 1:]
    return text


def documents(seed, count):
    """`count` (id, text) pairs for `seed`."""
    rnd = random.Random(seed)
    for i in range(count):
        text = Doc(rnd).document()
        if rnd.random() < 0.5:
            text = edit(rnd, text)
        yield f"{seed}-{i}", text
