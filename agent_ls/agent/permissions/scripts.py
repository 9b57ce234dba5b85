"""What a sed script or an awk program does, read from its text: whether it only reads and prints
(a grant on ``sed`` or ``awk`` covers that) or may run a program, write or read a file the
question does not show (then only the exact command may be granted). The programs' options are
in :mod:`.programs`, which asks these readers about the script it finds among the words."""

from __future__ import annotations

import re

_SED_SIMPLE = set("pdDnNgGhHxlP=zFqQ")


def sed_script_risk(script: str) -> str | None:
    """Why a sed script goes beyond reading and printing (``e``, ``w``/``W``, ``r``/``R``, ``s///e``,
    ``s///w``), or None. Anything the reader does not know counts as a risk."""
    i, n = 0, len(script)

    def skip_ws(k: int) -> int:
        while k < n and script[k] in " \t\n;":
            k += 1
        return k

    def delimited(k: int) -> int:
        """Past a /regex/ (or \\cregexc) starting at k (the delimiter)."""
        d = script[k]
        k += 1
        while k < n and script[k] != d:
            k += 2 if script[k] == "\\" else 1
        if k >= n:
            raise ValueError
        return k + 1

    try:
        while True:
            i = skip_ws(i)
            if i >= n:
                return None
            # addresses: N, $, /re/, \cREc, first~step, addr1,addr2 / addr,+N / addr,~N, then I/M flags and !
            for _ in range(2):
                if i < n and (script[i].isdigit() or script[i] in "$+~"):
                    i += 1
                    while i < n and (script[i].isdigit() or script[i] == "~"):
                        i += 1
                elif i < n and script[i] == "/":
                    i = delimited(i)
                elif i < n and script[i] == "\\" and i + 1 < n:
                    i = delimited(i + 1)
                while i < n and script[i] in "IM":
                    i += 1
                if i < n and script[i] == ",":
                    i += 1
                    continue
                break
            while i < n and script[i] in " \t!":
                i += 1
            if i >= n:
                return None
            c = script[i]
            i += 1
            if c in "{}":
                continue
            if c in _SED_SIMPLE:
                while i < n and script[i].isdigit():  # q5, l 70
                    i += 1
                continue
            if c in "aic":  # text to the end of the line
                while i < n and script[i] != "\n":
                    i += 1
                continue
            if c in "btTv:#":  # labels, comments: to ; or newline
                while i < n and script[i] not in "\n;":
                    i += 1
                continue
            if c in "sy":
                if i >= n or script[i] in "\n\\":
                    return "the sed script is not understood"
                i = delimited(i) - 1  # the pattern; its closing delimiter opens the replacement
                i = delimited(i)
                if c == "s":
                    while i < n and script[i] not in "\n;}":
                        f = script[i]
                        if f == "e":
                            return "sed's s///e flag runs the pattern space as a command"
                        if f in "wW":
                            return "sed's s///w flag writes a file"
                        if not (f.isdigit() or f in "gpiImM \t"):
                            return f"sed's s/// flag {f!r} is not known to be safe"
                        i += 1
                continue
            if c == "e":
                return "sed's e command runs a program"
            if c in "wW":
                return "sed's w command writes a file"
            if c in "rR":
                return "sed's r command reads a file, which is not shown"
            return f"the sed command {c!r} is not known to be safe"
    except ValueError:
        return "the sed script is not understood"


_AWK_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')


def awk_program_risk(program: str) -> str | None:
    """Why an awk program goes beyond reading and printing (``system()``, pipes, ``print >``
    files, ``getline`` from files, ``@load``), or None. Conservative: a comparison written
    ``print a > b`` counts as a file."""
    if "system" in program:
        return "awk's system() runs a program"
    text = _AWK_STRINGS.sub('""', program)
    if "@" in text:
        return "awk's @load/@include loads code"
    if "|" in text.replace("||", ""):
        return "awk's | runs a program (a pipe to or from a command)"
    if "getline" in text:
        return "awk's getline can read any file or run a command"
    for stmt in re.split(r"[;{}\n]", text):
        if re.search(r"\b(print|printf)\b", stmt) and ">" in stmt:
            return "awk's print > writes a file"
    return None
