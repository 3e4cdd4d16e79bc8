/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sroce_vm_kdata: the fixture of the checks (kdata_fixture.c): the run's
 * context, the pattern of the messages, DMA-mapped buffers and pages, the
 * connected pair of RC QPs, and the work requests and completions the
 * checks are written with.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_VM_KDATA_FIXTURE_H
#define SROCE_VM_KDATA_FIXTURE_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/if_ether.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#define KD_PORT		1
#define KD_TIMEOUT_MS	3000
#define KD_PSN0		0x100
#define KD_PSN1		0x900000
#define KD_PAGES	4
#define KD_CANARY	0xa5

/**
 * struct kd_repost - what the CQ handler of data-flush-repost does: one
 *	receive posted back
 * @wr: the receive to post
 * @sge: its buffer
 * @calls: handler calls
 * @reposts: handler calls that got to the post (the first one posts)
 * @err: what ib_post_recv() returned
 */
struct kd_repost {
	struct ib_recv_wr wr;
	struct ib_sge sge;
	int calls;
	int reposts;
	int err;
};

/**
 * struct kd_end - one end: its device, objects and address
 * @dev: the device
 * @pd: its PD
 * @cq: the CQ of both queues of @qp
 * @qp: the RC QP
 * @sgid_index: the first RoCEv2 GID of @dev with an IPv4 address
 * @gid: that GID
 * @mac: the MAC of that GID's netdev
 * @repost: the CQ handler's work, if any
 * @comp_hook: called first by the CQ handler, if set: lets a check sleep
 *	until completions come instead of polling (sroce_vm_krate)
 * @drained: IB_EVENT_SQ_DRAINED events
 */
struct kd_end {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 sgid_index;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	struct kd_repost *repost;
	void (*comp_hook)(struct kd_end *e);
	atomic_t drained;
};

/**
 * struct kd_ctx - one run of the checks
 * @end: [0] the requester, [1] the responder
 * @repost: the CQ handler's work; outlives every CQ of a run
 * @mtu: path MTU of the next kd_pair_up(); 0 for IB_MTU_4096
 * @why: the first difference the current check found; empty if none
 * @passed: checks passed so far
 * @failed: checks failed so far
 */
struct kd_ctx {
	struct kd_end end[2];
	struct kd_repost repost;
	enum ib_mtu mtu;
	char why[192];
	unsigned int passed;
	unsigned int failed;
};

/**
 * struct kd_buf - a kmalloc'd buffer and its DMA address
 * @va: the buffer
 * @dma: its DMA address
 * @len: its length
 */
struct kd_buf {
	u8 *va;
	u64 dma;
	size_t len;
};

/**
 * struct kd_pages - pages for a fast-registered MR, DMA-mapped
 * @page: the pages
 * @sg: their scatterlist
 * @nents: what ib_dma_map_sg() returned
 */
struct kd_pages {
	struct page *page[KD_PAGES];
	struct scatterlist sg[KD_PAGES];
	int nents;
};

/**
 * kd_bad() - record the first difference of a check
 * @c: the run
 * @bad: whether there is a difference
 * @fmt: what differed, printf-style; kept only if it is the check's first
 *
 * Return: @bad.
 */
__printf(3, 4) bool kd_bad(struct kd_ctx *c, bool bad, const char *fmt, ...);

/**
 * kd_fill() - write bytes of message @msg
 * @p: where
 * @len: how many bytes
 * @msg: the message
 * @first: the offset in the message of the first byte
 */
void kd_fill(u8 *p, size_t len, unsigned int msg, size_t first);

/**
 * kd_diff() - compare bytes with message @msg
 * @p: the bytes
 * @len: how many
 * @msg: the message
 * @first: the offset in the message of the first byte
 *
 * Return: the offset of the first byte that differs, or -1.
 */
long kd_diff(const u8 *p, size_t len, unsigned int msg, size_t first);

/**
 * kd_diff_byte() - compare bytes with one value
 * @p: the bytes
 * @len: how many
 * @b: the value each must have
 *
 * Return: the offset of the first byte that differs, or -1.
 */
long kd_diff_byte(const u8 *p, size_t len, u8 b);

/**
 * kd_buf_alloc() - a kmalloc'd buffer full of KD_CANARY, DMA-mapped
 * @c: the run
 * @dev: the device to map it for
 * @b: filled in; b->va is NULL on failure
 * @len: its length
 *
 * Return: true on success.
 */
bool kd_buf_alloc(struct kd_ctx *c, struct ib_device *dev, struct kd_buf *b,
		  size_t len);

/**
 * kd_buf_free() - unmap and free a buffer of kd_buf_alloc(), if any
 * @dev: the device it was mapped for
 * @b: the buffer
 */
void kd_buf_free(struct ib_device *dev, struct kd_buf *b);

/**
 * kd_sge() - an SGE of @b's first @len bytes with the PD's local_dma_lkey
 * @e: the end whose PD is used
 * @b: the buffer
 * @len: the SGE's length
 *
 * Return: the SGE.
 */
struct ib_sge kd_sge(struct kd_end *e, struct kd_buf *b, u32 len);

/**
 * kd_pages_alloc() - KD_PAGES zeroed pages, DMA-mapped
 * @c: the run
 * @dev: the device to map them for
 * @pg: filled in; kd_pages_free() it whatever this returns
 *
 * Return: true on success.
 */
bool kd_pages_alloc(struct kd_ctx *c, struct ib_device *dev,
		    struct kd_pages *pg);

/**
 * kd_pages_free() - unmap and free what kd_pages_alloc() got
 * @dev: the device they were mapped for
 * @pg: the pages
 */
void kd_pages_free(struct ib_device *dev, struct kd_pages *pg);

/**
 * kd_pages_diff() - compare bytes @off..@off+@len of the pages with
 *	message @msg
 * @pg: the pages
 * @off: the first byte
 * @len: how many
 * @msg: the message, or U32_MAX for zeroes
 *
 * Return: the offset (from @off) of the first byte that differs, or -1.
 */
long kd_pages_diff(struct kd_pages *pg, size_t off, size_t len,
		   unsigned int msg);

/**
 * kd_end_address() - the end's first RoCEv2 GID with an IPv4 address, and
 *	its MAC
 * @c: the run
 * @e: the end; e->dev set
 *
 * Return: true if found.
 */
bool kd_end_address(struct kd_ctx *c, struct kd_end *e);

/**
 * kd_pair_up() - create both ends' PD, CQ and QP and connect the QPs
 * @c: the run; kd_pair_down() it whatever this returns
 *
 * Return: true if both QPs are in RTS.
 */
bool kd_pair_up(struct kd_ctx *c);

/**
 * kd_pair_down() - destroy what kd_pair_up() created
 * @c: the run
 */
void kd_pair_down(struct kd_ctx *c);

/**
 * kd_expect() - one completion of @e, waited for up to KD_TIMEOUT_MS
 * @c: the run
 * @e: the end whose CQ is polled
 * @wr_id: its wr_id
 * @status: its status
 * @opcode: its opcode, checked on success only
 * @wc: gets the completion
 *
 * Return: true if it came as expected.
 */
bool kd_expect(struct kd_ctx *c, struct kd_end *e, u64 wr_id,
	       enum ib_wc_status status, enum ib_wc_opcode opcode,
	       struct ib_wc *wc);

/**
 * kd_post() - post a signaled send WR (chain) on @e's QP
 * @c: the run
 * @e: the end
 * @wr: the WR; IB_SEND_SIGNALED is added to it
 *
 * Return: true if ib_post_send() succeeded.
 */
bool kd_post(struct kd_ctx *c, struct kd_end *e, struct ib_send_wr *wr);

/**
 * kd_rdma() - post an RDMA WRITE or READ on the requester
 * @c: the run
 * @op: IB_WR_RDMA_WRITE or IB_WR_RDMA_READ
 * @b: the local buffer
 * @len: how many of its first bytes
 * @raddr: the remote address
 * @rkey: the remote key
 * @wr_id: the WR's wr_id
 *
 * Return: true if posted.
 */
bool kd_rdma(struct kd_ctx *c, enum ib_wr_opcode op, struct kd_buf *b,
	     u32 len, u64 raddr, u32 rkey, u64 wr_id);

/**
 * kd_reg() - register @mr (already mapped) on the responder's QP with its
 *	key, and wait for the completion
 * @c: the run
 * @mr: the MR
 * @wr_id: the REG_MR WR's wr_id
 *
 * Return: true if the registration completed successfully.
 */
bool kd_reg(struct kd_ctx *c, struct ib_mr *mr, u64 wr_id);

/**
 * kd_frmr() - a fast-reg MR of the responder's PD over @pg, with a fresh key
 * @c: the run
 * @pg: the pages, DMA-mapped
 *
 * Return: the MR (ib_dereg_mr() it), or NULL on failure.
 */
struct ib_mr *kd_frmr(struct kd_ctx *c, struct kd_pages *pg);

#endif /* SROCE_VM_KDATA_FIXTURE_H */
