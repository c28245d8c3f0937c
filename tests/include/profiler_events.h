/*
 * profiler_events.h -- which of NCCL's profiler events fire under an activation mask, for the C
 * test hosts that replay NCCL's event sequence (tests/hosts/profiler_host.c,
 * tests/oracle/canary_host.c, tests/simcluster/simcluster.c) and the checking plugin that judges
 * a host by it (tests/simcluster/profcheck.c). Header-only. Build with -I plugin-shim/include.
 *
 * NCCL 2.28.9 src/plugin/profiler.cc: an event starts when the mask the plugin returned from init
 * has its bit or the bit of any event below it (a parent exists for its children); KernelLaunch
 * only for its own bit. The sets below are NCCL's (groupApiMask, collApiMask, and the masks of
 * ncclProfilerStartGroupEvent, ncclProfilerStartTaskEvents and the proxy's events).
 */
#ifndef NCCLTJ_PROFILER_EVENTS_H_
#define NCCLTJ_PROFILER_EVENTS_H_

#include "nccl_profiler_abi.h"

/* ProxyOp starts for these (the proxy's ProxyOp events). */
#define TH_FIRES_PROXY_OP (ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileNetPlugin)
/* Coll starts for these (ncclProfilerStartTaskEvents). */
#define TH_FIRES_COLL (ncclProfileColl | ncclProfileKernelCh | TH_FIRES_PROXY_OP)
/* Group starts for these (ncclProfilerStartGroupEvent). */
#define TH_FIRES_GROUP (ncclProfileGroup | ncclProfileP2p | TH_FIRES_COLL)
/* CollApi starts for these (v5+: collApiMask). */
#define TH_FIRES_COLL_API (ncclProfileCollApi | TH_FIRES_COLL)
/* GroupApi starts for these (v5+: groupApiMask). */
#define TH_FIRES_GROUP_API \
  (ncclProfileGroupApi | ncclProfileP2pApi | ncclProfileCollApi | ncclProfileKernelLaunch | TH_FIRES_GROUP)

#endif /* NCCLTJ_PROFILER_EVENTS_H_ */
