# SPDX-License-Identifier: Apache-2.0
"""Writes adapters/mock/generated/slot_names.gen.cpp: every DDI slot's function name and
its position in ur_dditable_t, so a test can replace a mock slot by function name
(ordoMockReplace, adapters/mock/ordo_mock.h)."""
from spec import BANNER


def outputs(spec):
    o = [BANNER.rstrip(), '#include "slot_names.hpp"', "", "#include <cstddef>", "",
         "namespace mock {", "", "const SlotName kSlotNames[] = {"]
    n = 0
    for t in spec.tables:
        for s in t["slots"]:
            fn = spec.slot_function(s)
            o.append('    {"%s", offsetof(ur_dditable_t, %s) + offsetof(%s, %s)},'
                     % (fn["name"], t["field"], t["name"], s["name"]))
            n += 1
    o += ["};", "", "const size_t kSlotCount = %d;" % n, "", "} // namespace mock", ""]
    return {"adapters/mock/generated/slot_names.gen.cpp": "\n".join(o)}
