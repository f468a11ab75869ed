# cython: language_level=3, boundscheck=False, wraparound=False
"""Prototype (issue 29, item 1; bench only, not shipped): journald's
short-iso reader with its fast path -- a line of a seen timestamp and seen
"host ident[pid]: " columns, then printable ASCII -- typed for Cython: the
space search and the printable check are C loops over the string's code
points. Every other line is read by ``journald._short_records`` one line at a
time (its state across lines is not kept: good enough to time the fast path,
and ``bench/cython_reader.py`` checks the records against the module's)."""
from cpython.unicode cimport PyUnicode_READ, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH
from forensics.envelope import journald as J
from forensics.envelope.record import Record, split_escaped
from forensics.envelope.clean import clean_message

cdef inline bint printable_tail(str text, Py_ssize_t k):
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text)
    cdef Py_UCS4 c
    for i in range(k, n):
        c = PyUnicode_READ(kind, data, i)
        if c < 32 or c > 126:
            return False
    return True

cdef inline Py_ssize_t find_space(str text, Py_ssize_t start):
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text)
    for i in range(start, n):
        if PyUnicode_READ(kind, data, i) == 32:
            return i
    return -1

def short_iso_records(lines, clock):
    cdef dict stamps = {}
    cdef dict columns = {}
    cdef Py_ssize_t sp, k, n
    cdef str text, msg
    UNSEEN = J.UNSEEN
    prev = None
    for n, text in lines:
        sp = find_space(text, 0)
        if sp > 0:
            k = find_space(text, find_space(text, sp + 1) + 1) + 1
            cols = columns.get(text[sp + 1:k])
            if cols is not None and printable_tail(text, k):
                ts = stamps.get(text[:sp], UNSEEN)
                if ts is UNSEEN:
                    ts = J._new_stamp(stamps, text, sp)
                if ts is not UNSEEN:
                    msg = text[k:]
                    if "[0" in msg or "#0" in msg or "001b[" in msg:
                        msg = clean_message(msg)
                    prev = Record(n, msg, ts, *cols)
                    if "#012" in msg:
                        yield from split_escaped(prev)
                        continue
                    yield prev
                    continue
        for rec in J._short_records([(n, text)], "short-iso", clock):
            m = J.ASCII_PATTERNS["short-iso"].match(text)
            if m is not None and len(text) - len(m.group("msg") or "") == J.columns_end(text, len(m.group("ts"))):
                J._remember(columns, text[len(m.group("ts")) + 1:len(text) - len(m.group("msg") or "")], (rec.host, rec.ident, rec.pid))
            yield rec
