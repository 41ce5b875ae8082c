"""An RDMA GID (port address) as NCCL prints it: one spelling for the GID tables a host's tools print
(``ib_gids``, :mod:`forensics.sources._ib_gids`) and the ``remoteGids`` an NCCL completion error names
(:mod:`forensics.detect.causality` matches the two). Standard library only; imports nothing of the
package, so the sources below and detect above may both use it."""
from __future__ import annotations

import ipaddress


def address(gid: str | None) -> str | None:
    """The GID as NCCL prints it (inet_ntop): compressed IPv6, IPv4-mapped as ``::ffff:a.b.c.d``;
    None for text that is no GID, an unused (all-zero) entry or the bare link-local prefix.

    >>> address("0000:0000:0000:0000:0000:ffff:0a6e:0021"), address("fe80:0000:0000:0000:0ac0:ebff:fe3d:ca54")
    ('::ffff:10.110.0.33', 'fe80::ac0:ebff:fe3d:ca54')
    >>> address("::ffff:10.0.106.6"), address("0000:0000:0000:0000:0000:0000:0000:0000"), address("x")
    ('::ffff:10.0.106.6', None, None)
    """
    try:
        a = ipaddress.IPv6Address((gid or "").strip())
    except ValueError:
        return None
    if int(a) == 0 or int(a) == 0xFE80 << 112:
        return None
    return f"::ffff:{a.ipv4_mapped}" if a.ipv4_mapped is not None else a.compressed


__all__ = ["address"]
