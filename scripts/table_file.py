"""Writing a table file whole or not at all, for the converters under scripts/ (gemm/, attention/)."""
import os


def write_lines(path, lines):
    """The lines, newline-terminated, into a temporary file beside `path`, renamed over it: a reader
    never sees half a table, and a failed run leaves the old one."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(tmp, path)
