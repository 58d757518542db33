"""The CSV traces (Azure, BurstGPT): a header naming the columns, then one request a row."""
from __future__ import annotations

import csv

from serq.trace_import import TraceImportError, open_text


def rows(path: str, required: tuple):
    """``(line, {column: text})`` for each data row of the CSV file at ``path``, whose
    header must name every column of ``required`` (in any order; others are ignored)."""
    f = open_text(path)
    with f:
        reader = csv.reader(f)
        header = None
        try:
            for fields in reader:
                lineno = reader.line_num
                if header is None:
                    if not fields or not "".join(fields).strip():
                        continue
                    header = [h.strip() for h in fields]
                    missing = [c for c in required if c not in header]
                    if missing:
                        raise TraceImportError(
                            f"{path}:{lineno}: the header lacks the column"
                            f"{'s' if len(missing) > 1 else ''} "
                            + ", ".join(f"`{c}`" for c in missing)
                            + f"\nhelp: the header is `{','.join(header)}`; this format's "
                            f"columns are `{','.join(required)}`")
                    index = {c: header.index(c) for c in required}
                    continue
                if not fields or (len(fields) == 1 and not fields[0].strip()):
                    continue  # a blank line
                if len(fields) != len(header):
                    raise TraceImportError(f"{path}:{lineno}: expected {len(header)} fields "
                                           f"as in the header, got {len(fields)}")
                yield lineno, {c: fields[i] for c, i in index.items()}
        except csv.Error as e:
            raise TraceImportError(f"{path}:{reader.line_num}: {e}") from None
        except UnicodeDecodeError:
            raise TraceImportError(f"{path}: not a UTF-8 text file") from None
        if header is None:
            raise TraceImportError(f"{path}: empty file (no header line `{','.join(required)}`)")
