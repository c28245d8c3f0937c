#!/usr/bin/env python3
"""craft.py transplant A.yaml.compiled B.yaml.compiled OUT: B's compiled body under A's 24-byte key,
   the trailing CRC-32C recomputed (the plugin should still refuse it: different decisions from A's).
craft.py collide A.yaml OUT.yaml: A.yaml with one rule's candidate changed and 96 comment bytes chosen so
   that the length, CRC-32C and CRC-32 stay A's: A.yaml.compiled then claims to be OUT.yaml's."""
import sys, zlib
def crc32c(b, c=0):
    c ^= 0xffffffff
    for x in b:
        c ^= x
        for _ in range(8): c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xffffffff
def key(b): return (crc32c(b) << 32) | zlib.crc32(b)
if sys.argv[1] == "transplant":
    a = open(sys.argv[2], "rb").read(); b = open(sys.argv[3], "rb").read()
    body = a[:24] + b[24:-4]
    open(sys.argv[4], "wb").write(body + crc32c(body).to_bytes(4, "big"))
    sys.exit(0)
y = bytearray(open(sys.argv[2], "rb").read())
target = key(bytes(y))
# edit: the first 'algorithm: TREE' of a rule becomes 'algorithm: RING' (same length)
i = y.find(b"algorithm: TREE"); assert i > 0
y[i + 11:i + 15] = b"RING"
# free bits: a comment line of 96 '`' after the 'rules:' line; each '`' <-> 'a' flips bit 0
j = y.find(b"    rules:\n") + len(b"    rules:\n")
line = b"      # " + b"`" * 96 + b"\n"
# keep the length: drop len(line) bytes from the description-free head? Instead cut the same number
# of bytes from the name's padding: we append the line and remove len(line) bytes of spaces we add
# nowhere else, so the length is fixed by shortening this rule list's indentation... simpler: the
# original gets no line, so compare against the same length by also removing a trailing comment.
y[j:j] = line
pos = [j + 8 + k for k in range(96)]
# the YAML must keep A's length: A must end with a comment of len(line) bytes we can drop
tail = y.rfind(b"\n# pad ")
assert tail > 0, "A.yaml needs a last line '# pad ...' as long as the comment line"
del y[tail + 1:]
assert len(y) == len(open(sys.argv[2], "rb").read()), (len(y),)
base = key(bytes(y))
cols = []
for p in pos:
    z = bytearray(y); z[p] ^= 1
    cols.append(key(bytes(z)) ^ base)
# solve sum(x_k * cols[k]) = base ^ target over GF(2)
want = base ^ target
rows = [(c, 1 << k) for k, c in enumerate(cols)]
basis = {}
for c, m in rows:
    for bit in range(63, -1, -1):
        if not (c >> bit) & 1: continue
        if bit in basis: c ^= basis[bit][0]; m ^= basis[bit][1]
        else: basis[bit] = (c, m); break
m = 0; w = want
for bit in range(63, -1, -1):
    if (w >> bit) & 1:
        assert bit in basis, "no solution"
        w ^= basis[bit][0]; m ^= basis[bit][1]
for k, p in enumerate(pos):
    if (m >> k) & 1: y[p] ^= 1
assert key(bytes(y)) == target and len(y) == len(open(sys.argv[2], "rb").read())
open(sys.argv[3], "wb").write(bytes(y))
