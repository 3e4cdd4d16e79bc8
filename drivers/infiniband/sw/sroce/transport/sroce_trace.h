/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce tracepoints: a QP's send rate as its limits and congestion
 * control change it (events/sroce/ in tracefs).
 *
 * Copyright (c) 2026 The sroce authors
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/tracepoint.h>

/* A source changed its limit; @bps is the rate the gate applies now. */
TRACE_EVENT(sroce_rate,
	    TP_PROTO(u32 qpn, unsigned int src, u64 limit, u64 bps),
	    TP_ARGS(qpn, src, limit, bps),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(unsigned int, src)
			     __field(u64, limit)
			     __field(u64, bps)),
	    TP_fast_assign(__entry->qpn = qpn;
			   __entry->src = src;
			   __entry->limit = limit;
			   __entry->bps = bps;),
	    TP_printk("qpn=0x%06x src=%s limit=%llu B/s rate=%llu B/s",
		      __entry->qpn,
		      __print_symbolic(__entry->src, { 0, "qp" },
				       { 1, "static" }, { 2, "cc" }),
		      __entry->limit, __entry->bps)
);

/* The DCQCN reaction point of a QP after a cut or an increase event. */
TRACE_EVENT(sroce_dcqcn,
	    TP_PROTO(u32 qpn, unsigned int stage, u64 rc, u64 rt, u32 alpha),
	    TP_ARGS(qpn, stage, rc, rt, alpha),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(unsigned int, stage)
			     __field(u64, rc)
			     __field(u64, rt)
			     __field(u32, alpha)),
	    TP_fast_assign(__entry->qpn = qpn;
			   __entry->stage = stage;
			   __entry->rc = rc;
			   __entry->rt = rt;
			   __entry->alpha = alpha;),
	    TP_printk("qpn=0x%06x stage=%s rc=%llu B/s rt=%llu B/s alpha=%u/1048576",
		      __entry->qpn,
		      __print_symbolic(__entry->stage, { 0, "idle" },
				       { 1, "cut" }, { 2, "fast" },
				       { 3, "additive" }, { 4, "hyper" }),
		      __entry->rc, __entry->rt, __entry->alpha)
);

#endif /* SROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH transport
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sroce_trace
#include <trace/define_trace.h>
