// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the ICRC of sroce_icrc.c.
 *
 * The expected ICRCs come from the project's reference implementation
 * (shared/vectors/icrc_reference.py: the algorithm of annex A17 on top of
 * zlib.crc32, cross-checked with a bitwise crc32_le). After the two base
 * packets come a CNP captured from a ConnectX-4 Lx NIC, whose ICRC the
 * script reproduces, and the script's IPv6 sample; the other packets were
 * built and checked with its icrc_ipv4() and icrc_ipv6(): IPv4 and IPv6,
 * the opcode families, payloads of odd lengths with their pad, and 4 KiB
 * payloads. Payload byte i is (i * mul + add) & 0xff.
 */

#include <asm/unaligned.h>
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "test_util.h"
#include "wire/sroce_icrc.h"

#define ICRC_HDR_MAX	88	/* IPv6, UDP, BTH, AtomicETH */

struct icrc_vector {
	const char *name;
	unsigned int hdr_len;
	u8 hdr[ICRC_HDR_MAX];	/* IP header up to the payload */
	unsigned int payload_len;
	u8 mul, add;
	unsigned int len;	/* whole IP packet */
	u8 icrc[SROCE_ICRC_LEN];	/* as on the wire */
};

/* The packets whose fields icrc_field_cases[] and icrc_bad_cases[] flip. */
enum { ICRC_BASE_V4, ICRC_BASE_V6 };

static const struct icrc_vector icrc_vectors[] = {
	[ICRC_BASE_V4] = {
		.name = "IPv4 RC RDMA_WRITE_ONLY, RETH, 13 bytes",
		.hdr_len = 56,
		.hdr = {
			0x45, 0x02, 0x00, 0x4c, 0x1c, 0x46, 0x40, 0x00,
			0x3f, 0x11, 0x9b, 0xea, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x00, 0x38, 0x00, 0x00, 0x0a, 0x30, 0xff, 0xff,
			0x00, 0x00, 0x01, 0x23, 0x80, 0x12, 0x34, 0x56,
			0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x50, 0x00,
			0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x0d,
		},
		.payload_len = 13,
		.mul = 13,
		.add = 1,
		.len = 76,
		.icrc = { 0xbf, 0x35, 0x81, 0x39 },
	},
	[ICRC_BASE_V6] = {
		.name = "IPv6 RC SEND_ONLY, 5 bytes, TC and flow label",
		.hdr_len = 60,
		.hdr = {
			0x6b, 0x8a, 0xbc, 0xde, 0x00, 0x20, 0x11, 0x01,
			0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
			0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
			0xc1, 0x32, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00,
			0x04, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12,
			0x80, 0x00, 0x00, 0x02,
		},
		.payload_len = 5,
		.mul = 13,
		.add = 1,
		.len = 72,
		.icrc = { 0x03, 0x2b, 0x2f, 0x5b },
	},
	{
		.name = "ConnectX-4 Lx CNP capture",
		.hdr_len = 40,
		.hdr = {
			0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00,
			0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01,
			0x0a, 0x00, 0x12, 0x01, 0x00, 0x00, 0x12, 0xb7,
			0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff,
			0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
		},
		.payload_len = 16,
		.len = 60,
		.icrc = { 0x82, 0xfd, 0x00, 0x2a },
	},
	{
		.name = "reference IPv6 sample",
		.hdr_len = 64,
		.hdr = {
			0x61, 0x25, 0x43, 0x21, 0x00, 0x1c, 0x11, 0x40,
			0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
			0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
			0xc1, 0x23, 0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00,
			0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
			0x80, 0x00, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef,
		},
		.payload_len = 0,
		.len = 68,
		.icrc = { 0x02, 0xf3, 0x85, 0xf8 },
	},
	{
		.name = "IPv4 RC SEND_ONLY, 4 bytes",
		.hdr_len = 40,
		.hdr = {
			0x45, 0x00, 0x00, 0x30, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb7, 0x4e, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x00, 0x1c, 0x00, 0x00, 0x04, 0x00, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x12, 0x80, 0x00, 0x00, 0x01,
		},
		.payload_len = 4,
		.mul = 13,
		.add = 1,
		.len = 48,
		.icrc = { 0xfa, 0x68, 0x8f, 0x55 },
	},
	{
		.name = "IPv4 RC SEND_ONLY, 1 byte, pad 3",
		.hdr_len = 40,
		.hdr = {
			0x45, 0x00, 0x00, 0x30, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb7, 0x4e, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x00, 0x1c, 0x00, 0x00, 0x04, 0x30, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x12, 0x80, 0xff, 0xff, 0xff,
		},
		.payload_len = 1,
		.mul = 13,
		.add = 1,
		.len = 48,
		.icrc = { 0x81, 0x88, 0xc3, 0x8e },
	},
	{
		.name = "IPv4 RC SEND_LAST_IMM, 2 bytes, pad 2",
		.hdr_len = 44,
		.hdr = {
			0x45, 0x00, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb7, 0x4a, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x00, 0x20, 0x00, 0x00, 0x03, 0xa0, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x12, 0x80, 0x00, 0x00, 0x10,
			0x12, 0x34, 0x56, 0x78,
		},
		.payload_len = 2,
		.mul = 13,
		.add = 1,
		.len = 52,
		.icrc = { 0x0d, 0x5f, 0x42, 0xe8 },
	},
	{
		.name = "IPv4 RC SEND_ONLY_INV, 3 bytes, pad 1",
		.hdr_len = 44,
		.hdr = {
			0x45, 0x00, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb7, 0x4a, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x00, 0x20, 0x00, 0x00, 0x17, 0x10, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x12, 0x80, 0x00, 0x00, 0x20,
			0xab, 0xcd, 0x01, 0x02,
		},
		.payload_len = 3,
		.mul = 13,
		.add = 1,
		.len = 52,
		.icrc = { 0xd0, 0xf3, 0x0f, 0xf4 },
	},
	{
		.name = "IPv4 RC RDMA_READ_REQUEST, RETH",
		.hdr_len = 56,
		.hdr = {
			0x45, 0x00, 0x00, 0x3c, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb7, 0x42, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x00, 0x28, 0x00, 0x00, 0x0c, 0x00, 0xff, 0xff,
			0x00, 0xab, 0xcd, 0xef, 0x80, 0x80, 0x00, 0x00,
			0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x10, 0x00,
			0x00, 0x00, 0xca, 0xfe, 0x00, 0x01, 0x00, 0x00,
		},
		.payload_len = 0,
		.mul = 13,
		.add = 1,
		.len = 60,
		.icrc = { 0xab, 0x65, 0xaa, 0xf9 },
	},
	{
		.name = "IPv4 RC READ_RESPONSE_ONLY, AETH, 7 bytes",
		.hdr_len = 44,
		.hdr = {
			0x45, 0x00, 0x00, 0x38, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb7, 0x46, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xe0, 0x01, 0x12, 0xb7,
			0x00, 0x24, 0x00, 0x00, 0x10, 0x10, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x11, 0x00, 0x80, 0x00, 0x00,
			0x1f, 0x00, 0x00, 0x42,
		},
		.payload_len = 7,
		.mul = 13,
		.add = 1,
		.len = 56,
		.icrc = { 0xc6, 0x76, 0x85, 0xf1 },
	},
	{
		.name = "IPv4 RC ACKNOWLEDGE, AETH NAK",
		.hdr_len = 44,
		.hdr = {
			0x45, 0x00, 0x00, 0x30, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb7, 0x4e, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xe0, 0x01, 0x12, 0xb7,
			0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x07,
			0x60, 0x00, 0x00, 0x05,
		},
		.payload_len = 0,
		.mul = 13,
		.add = 1,
		.len = 48,
		.icrc = { 0xfa, 0xc5, 0x6b, 0x43 },
	},
	{
		.name = "IPv4 RC COMPARE_SWAP, AtomicETH",
		.hdr_len = 68,
		.hdr = {
			0x45, 0x00, 0x00, 0x48, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb7, 0x36, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x00, 0x34, 0x00, 0x00, 0x13, 0x00, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x99,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
			0x00, 0x00, 0x00, 0x77, 0x11, 0x11, 0x22, 0x22,
			0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x66,
			0x77, 0x77, 0x88, 0x88,
		},
		.payload_len = 0,
		.mul = 13,
		.add = 1,
		.len = 72,
		.icrc = { 0x1b, 0x22, 0x12, 0x1f },
	},
	{
		.name = "IPv4 RC ATOMIC_ACKNOWLEDGE",
		.hdr_len = 52,
		.hdr = {
			0x45, 0x00, 0x00, 0x38, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb7, 0x46, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x00, 0x24, 0x00, 0x00, 0x12, 0x00, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x99,
			0x1f, 0x00, 0x00, 0x03, 0x01, 0x02, 0x03, 0x04,
			0x05, 0x06, 0x07, 0x08,
		},
		.payload_len = 0,
		.mul = 13,
		.add = 1,
		.len = 56,
		.icrc = { 0x20, 0x9a, 0x3f, 0x91 },
	},
	{
		.name = "IPv4 UD SEND_ONLY_IMM, DETH, 256 bytes",
		.hdr_len = 52,
		.hdr = {
			0x45, 0x00, 0x01, 0x38, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xb6, 0x46, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x01, 0x24, 0x00, 0x00, 0x65, 0x80, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
			0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
			0xfe, 0xed, 0xfa, 0xce,
		},
		.payload_len = 256,
		.mul = 7,
		.add = 3,
		.len = 312,
		.icrc = { 0x1a, 0x51, 0x5f, 0x3e },
	},
	{
		.name = "IPv4 RC SEND_ONLY, 4 KiB",
		.hdr_len = 40,
		.hdr = {
			0x45, 0x00, 0x10, 0x2c, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xa7, 0x52, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x10, 0x18, 0x00, 0x00, 0x04, 0x00, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x12, 0x80, 0x00, 0x00, 0x42,
		},
		.payload_len = 4096,
		.mul = 7,
		.add = 3,
		.len = 4140,
		.icrc = { 0x1d, 0xbb, 0x59, 0x9e },
	},
	{
		.name = "IPv4 UC RDMA_WRITE_FIRST, 4093 bytes, pad 3",
		.hdr_len = 56,
		.hdr = {
			0x45, 0x00, 0x10, 0x3c, 0x00, 0x00, 0x40, 0x00,
			0x40, 0x11, 0xa7, 0x42, 0xc0, 0xa8, 0x01, 0x0a,
			0xc0, 0xa8, 0x01, 0x14, 0xc1, 0x32, 0x12, 0xb7,
			0x10, 0x28, 0x00, 0x00, 0x26, 0x30, 0xff, 0xff,
			0x00, 0x00, 0x00, 0x12, 0x00, 0xff, 0xff, 0xfe,
			0x00, 0x00, 0x00, 0x12, 0x34, 0x56, 0x78, 0x90,
			0x00, 0x00, 0x00, 0x99, 0x00, 0x00, 0x20, 0x00,
		},
		.payload_len = 4093,
		.mul = 251,
		.add = 17,
		.len = 4156,
		.icrc = { 0x5a, 0x79, 0xd2, 0x8a },
	},
	{
		.name = "IPv6 RC RDMA_WRITE_ONLY_IMM, 1024 bytes",
		.hdr_len = 80,
		.hdr = {
			0x60, 0x00, 0x00, 0x00, 0x04, 0x2c, 0x11, 0x40,
			0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x01,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x0a,
			0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x01,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x0b,
			0xc1, 0x32, 0x12, 0xb7, 0x04, 0x2c, 0x00, 0x00,
			0x0b, 0x80, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12,
			0x80, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x43, 0x21,
			0x00, 0x00, 0x04, 0x00, 0xa5, 0xa5, 0xa5, 0xa5,
		},
		.payload_len = 1024,
		.mul = 13,
		.add = 1,
		.len = 1108,
		.icrc = { 0x80, 0x77, 0xb1, 0xca },
	},
	{
		.name = "IPv6 RC ACKNOWLEDGE, RNR NAK",
		.hdr_len = 64,
		.hdr = {
			0x60, 0x00, 0x00, 0x00, 0x00, 0x1c, 0x11, 0x40,
			0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
			0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
			0xf0, 0x0d, 0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00,
			0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
			0x00, 0x00, 0x00, 0x04, 0x2e, 0x00, 0x00, 0x10,
		},
		.payload_len = 0,
		.mul = 13,
		.add = 1,
		.len = 68,
		.icrc = { 0xab, 0x77, 0xac, 0x10 },
	},
	{
		.name = "IPv6 RC FETCH_ADD, AtomicETH",
		.hdr_len = 88,
		.hdr = {
			0x60, 0x00, 0x00, 0x00, 0x00, 0x34, 0x11, 0x40,
			0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
			0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
			0xc1, 0x32, 0x12, 0xb7, 0x00, 0x34, 0x00, 0x00,
			0x14, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
			0x80, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x88,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		},
		.payload_len = 0,
		.mul = 13,
		.add = 1,
		.len = 92,
		.icrc = { 0x95, 0x76, 0x42, 0x26 },
	},
	{
		.name = "IPv6 RC SEND_ONLY, 4 KiB",
		.hdr_len = 60,
		.hdr = {
			0x60, 0x00, 0x00, 0x00, 0x10, 0x18, 0x11, 0x40,
			0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x01,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x0a,
			0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x01,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x0b,
			0xc1, 0x32, 0x12, 0xb7, 0x10, 0x18, 0x00, 0x00,
			0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12,
			0x80, 0x00, 0x00, 0x06,
		},
		.payload_len = 4096,
		.mul = 7,
		.add = 3,
		.len = 4160,
		.icrc = { 0x66, 0x3b, 0xbf, 0xee },
	},
};

static void icrc_vector_desc(const struct icrc_vector *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(icrc_vector, icrc_vectors, icrc_vector_desc);

/*
 * The packet of @v with its ICRC field zeroed, in a buffer of @v->len +
 * @extra bytes; the extra bytes, like Ethernet padding, are not zero.
 */
static u8 *icrc_packet(struct kunit *test, const struct icrc_vector *v,
		       unsigned int extra)
{
	unsigned int i, pad = -v->payload_len & 3;
	u8 *pkt;

	KUNIT_ASSERT_EQ_MSG(test, v->hdr_len + v->payload_len + pad +
			    SROCE_ICRC_LEN, v->len, "inconsistent vector");
	pkt = kunit_kmalloc(test, v->len + extra, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pkt);
	memcpy(pkt, v->hdr, v->hdr_len);
	for (i = 0; i < v->payload_len; i++)
		pkt[v->hdr_len + i] = i * v->mul + v->add;
	memset(pkt + v->hdr_len + v->payload_len, 0, pad + SROCE_ICRC_LEN);
	memset(pkt + v->len, 0xa5, extra);
	return pkt;
}

static void expect_icrc(struct kunit *test, u32 icrc, const u8 *want)
{
	u8 wire[SROCE_ICRC_LEN];

	put_unaligned_le32(icrc, wire);
	KUNIT_EXPECT_EQ_MSG(test, get_unaligned_be32(wire),
			    get_unaligned_be32(want), "ICRC as sent");
}

static const enum sroce_crc_engine icrc_engines[] = {
	SROCE_CRC_LIB, SROCE_CRC_SHASH,
};

/* Both engines reproduce the reference, trailing bytes notwithstanding. */
static void icrc_vector_calc_test(struct kunit *test)
{
	const struct icrc_vector *v = test->param_value;
	u8 *pkt = icrc_packet(test, v, 7);
	unsigned int i;
	u32 icrc;

	for (i = 0; i < ARRAY_SIZE(icrc_engines); i++) {
		if (!sroce_crc_engine_ready(icrc_engines[i]))
			continue;
		KUNIT_ASSERT_EQ(test, sroce_icrc_calc_engine(icrc_engines[i],
							     pkt, v->len,
							     &icrc), 0);
		expect_icrc(test, icrc, v->icrc);
		KUNIT_ASSERT_EQ(test, sroce_icrc_calc_engine(icrc_engines[i],
							     pkt, v->len + 7,
							     &icrc), 0);
		expect_icrc(test, icrc, v->icrc);
	}
	KUNIT_ASSERT_EQ(test, sroce_icrc_calc(pkt, v->len, &icrc), 0);
	expect_icrc(test, icrc, v->icrc);
}

/* fill() writes the reference bytes; valid() accepts only them. */
static void icrc_vector_fill_test(struct kunit *test)
{
	const struct icrc_vector *v = test->param_value;
	u8 *pkt = icrc_packet(test, v, 0);
	u8 *icrc = pkt + v->len - SROCE_ICRC_LEN;

	KUNIT_EXPECT_FALSE(test, sroce_icrc_valid(pkt, v->len));
	KUNIT_ASSERT_EQ(test, sroce_icrc_fill(pkt, v->len), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(icrc),
			get_unaligned_be32(v->icrc));
	KUNIT_EXPECT_TRUE(test, sroce_icrc_valid(pkt, v->len));
	icrc[3] ^= 0x80;
	KUNIT_EXPECT_FALSE(test, sroce_icrc_valid(pkt, v->len));
}

struct icrc_skb_layout {
	const char *name;
	bool linear;		/* else only the headers are in the head */
	unsigned int frag_len;	/* bytes per page fragment */
	bool pulled;		/* skb->data past the UDP header */
};

static const struct icrc_skb_layout icrc_skb_layouts[] = {
	{ "linear", true },
	{ "payload in fragments", false, 777 },
	{ "pulled to the BTH, one fragment", false, 4000, true },
};

/* Build @pkt as an skb shaped like @l; the caller frees it. */
static struct sk_buff *icrc_skb(struct kunit *test, const u8 *pkt,
				const struct icrc_vector *v,
				const struct icrc_skb_layout *l)
{
	unsigned int head = l->linear ? v->len : v->hdr_len, off, n;
	struct sk_buff *skb = alloc_skb(head, GFP_KERNEL);
	struct page *page;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, pkt, head);
	skb_reset_network_header(skb);
	for (off = head; off < v->len; off += n) {
		n = min(v->len - off, l->frag_len);
		page = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, page);
		/* Start each fragment at an odd place in its page. */
		memcpy(page_address(page) + 3, pkt + off, n);
		skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page, 3, n,
				PAGE_SIZE);
	}
	if (l->pulled)
		skb_pull(skb, (pkt[0] >> 4 == 4 ? sizeof(struct iphdr) :
			       sizeof(struct ipv6hdr)) + sizeof(struct udphdr));
	return skb;
}

static void icrc_skb_test(struct kunit *test)
{
	const struct icrc_vector *v = test->param_value;
	const u8 *pkt = icrc_packet(test, v, 0);
	const struct icrc_skb_layout *l;
	struct sk_buff *skb;
	u8 icrc[SROCE_ICRC_LEN];
	int off;

	for (l = icrc_skb_layouts; l < icrc_skb_layouts +
	     ARRAY_SIZE(icrc_skb_layouts); l++) {
		skb = icrc_skb(test, pkt, v, l);
		off = skb_network_offset(skb) + v->len - SROCE_ICRC_LEN;
		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc_skb_check(skb), -EBADMSG,
				    "%s", l->name);
		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc_skb_fill(skb), 0, "%s",
				    l->name);
		KUNIT_EXPECT_EQ(test, skb_copy_bits(skb, off, icrc,
						    sizeof(icrc)), 0);
		KUNIT_EXPECT_EQ_MSG(test, get_unaligned_be32(icrc),
				    get_unaligned_be32(v->icrc), "%s", l->name);
		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc_skb_check(skb), 0, "%s",
				    l->name);
		/* Corrupt the last byte before the ICRC. */
		skb_copy_bits(skb, off - 1, icrc, 1);
		icrc[0] ^= 0x01;
		skb_store_bits(skb, off - 1, icrc, 1);
		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc_skb_check(skb), -EBADMSG,
				    "%s", l->name);
		kfree_skb(skb);
	}
}

enum icrc_field_kind {
	MASKED,		/* invariant: the ICRC ignores the field */
	COVERED,	/* the ICRC changes with the field */
	ICRC_FIELD,	/* the ICRC itself: unchanged, but no longer valid */
};

struct icrc_field_case {
	const char *name;
	int base;
	int off;	/* byte; from the end of the packet if negative */
	u8 bit;
	enum icrc_field_kind kind;
};

static const struct icrc_field_case icrc_field_cases[] = {
	{ "IPv4 ECN", ICRC_BASE_V4, 1, 0x01, MASKED },
	{ "IPv4 DSCP", ICRC_BASE_V4, 1, 0x80, MASKED },
	{ "IPv4 TTL", ICRC_BASE_V4, 8, 0x01, MASKED },
	{ "IPv4 header checksum, high byte", ICRC_BASE_V4, 10, 0x80, MASKED },
	{ "IPv4 header checksum, low byte", ICRC_BASE_V4, 11, 0x01, MASKED },
	{ "IPv4 UDP checksum", ICRC_BASE_V4, 27, 0x04, MASKED },
	{ "IPv4 BTH FECN", ICRC_BASE_V4, 32, 0x80, MASKED },
	{ "IPv4 BTH BECN", ICRC_BASE_V4, 32, 0x40, MASKED },
	{ "IPv4 BTH resv6", ICRC_BASE_V4, 32, 0x01, MASKED },
	{ "IPv4 identification", ICRC_BASE_V4, 5, 0x01, COVERED },
	{ "IPv4 DF", ICRC_BASE_V4, 6, 0x40, COVERED },
	{ "IPv4 source address", ICRC_BASE_V4, 12, 0x01, COVERED },
	{ "IPv4 destination address", ICRC_BASE_V4, 19, 0x80, COVERED },
	{ "IPv4 UDP source port", ICRC_BASE_V4, 21, 0x01, COVERED },
	{ "IPv4 UDP destination port", ICRC_BASE_V4, 22, 0x80, COVERED },
	{ "IPv4 BTH OpCode", ICRC_BASE_V4, 28, 0x01, COVERED },
	{ "IPv4 BTH SE", ICRC_BASE_V4, 29, 0x80, COVERED },
	{ "IPv4 BTH MigReq", ICRC_BASE_V4, 29, 0x40, COVERED },
	{ "IPv4 BTH PadCnt", ICRC_BASE_V4, 29, 0x10, COVERED },
	{ "IPv4 BTH TVer", ICRC_BASE_V4, 29, 0x01, COVERED },
	{ "IPv4 BTH P_Key", ICRC_BASE_V4, 31, 0x01, COVERED },
	{ "IPv4 BTH DestQP", ICRC_BASE_V4, 35, 0x01, COVERED },
	{ "IPv4 BTH AckReq", ICRC_BASE_V4, 36, 0x80, COVERED },
	{ "IPv4 BTH resv7", ICRC_BASE_V4, 36, 0x01, COVERED },
	{ "IPv4 BTH PSN", ICRC_BASE_V4, 39, 0x01, COVERED },
	{ "IPv4 RETH VA", ICRC_BASE_V4, 40, 0x80, COVERED },
	{ "IPv4 RETH DMA Length", ICRC_BASE_V4, 55, 0x01, COVERED },
	{ "IPv4 first payload byte", ICRC_BASE_V4, 56, 0x01, COVERED },
	{ "IPv4 pad byte", ICRC_BASE_V4, -5, 0x01, COVERED },
	{ "IPv4 ICRC first byte", ICRC_BASE_V4, -4, 0x01, ICRC_FIELD },
	{ "IPv4 ICRC last byte", ICRC_BASE_V4, -1, 0x80, ICRC_FIELD },
	{ "IPv6 traffic class, high bit", ICRC_BASE_V6, 0, 0x08, MASKED },
	{ "IPv6 traffic class, low bit", ICRC_BASE_V6, 1, 0x10, MASKED },
	{ "IPv6 flow label, high bit", ICRC_BASE_V6, 1, 0x08, MASKED },
	{ "IPv6 flow label, low bit", ICRC_BASE_V6, 3, 0x01, MASKED },
	{ "IPv6 hop limit", ICRC_BASE_V6, 7, 0x02, MASKED },
	{ "IPv6 UDP checksum", ICRC_BASE_V6, 46, 0x80, MASKED },
	{ "IPv6 BTH FECN", ICRC_BASE_V6, 52, 0x80, MASKED },
	{ "IPv6 BTH BECN", ICRC_BASE_V6, 52, 0x40, MASKED },
	{ "IPv6 source address", ICRC_BASE_V6, 8, 0x01, COVERED },
	{ "IPv6 destination address", ICRC_BASE_V6, 39, 0x01, COVERED },
	{ "IPv6 UDP source port", ICRC_BASE_V6, 40, 0x01, COVERED },
	{ "IPv6 BTH P_Key", ICRC_BASE_V6, 50, 0x80, COVERED },
	{ "IPv6 BTH PSN", ICRC_BASE_V6, 59, 0x01, COVERED },
	{ "IPv6 last payload byte", ICRC_BASE_V6, 64, 0x01, COVERED },
	{ "IPv6 ICRC", ICRC_BASE_V6, -2, 0x10, ICRC_FIELD },
};

static void icrc_field_desc(const struct icrc_field_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(icrc_field, icrc_field_cases, icrc_field_desc);

static void icrc_field_test(struct kunit *test)
{
	const struct icrc_field_case *t = test->param_value;
	const struct icrc_vector *v = &icrc_vectors[t->base];
	u8 *pkt = icrc_packet(test, v, 0);
	unsigned int off = t->off < 0 ? v->len + t->off : t->off;
	u32 before, after;

	KUNIT_ASSERT_EQ(test, sroce_icrc_fill(pkt, v->len), 0);
	KUNIT_ASSERT_EQ(test, sroce_icrc_calc(pkt, v->len, &before), 0);
	pkt[off] ^= t->bit;
	KUNIT_ASSERT_EQ(test, sroce_icrc_calc(pkt, v->len, &after), 0);

	if (t->kind == COVERED)
		KUNIT_EXPECT_NE(test, after, before);
	else
		KUNIT_EXPECT_EQ(test, after, before);
	KUNIT_EXPECT_EQ(test, sroce_icrc_valid(pkt, v->len), t->kind == MASKED);
}

struct icrc_bad_case {
	const char *name;
	int base;
	int off;	/* byte to overwrite, or -1 for none */
	u8 val;
	int len;	/* bytes handed over; 0 for all, negative to cut */
};

#define CUT(n)	(-(n))

static const struct icrc_bad_case icrc_bad_cases[] = {
	{ "empty buffer", ICRC_BASE_V4, -1, 0, CUT(76) },
	{ "one byte", ICRC_BASE_V4, -1, 0, CUT(75) },
	{ "IPv4 without all of the BTH", ICRC_BASE_V4, -1, 0, CUT(37) },
	{ "IPv6 without all of the BTH", ICRC_BASE_V6, -1, 0, CUT(13) },
	{ "IPv4 without the last byte", ICRC_BASE_V4, -1, 0, CUT(1) },
	{ "IPv6 without the last byte", ICRC_BASE_V6, -1, 0, CUT(1) },
	{ "IP version 5", ICRC_BASE_V4, 0, 0x55, 0 },
	{ "IP version 0", ICRC_BASE_V4, 0, 0x05, 0 },
	{ "IPv4 with options", ICRC_BASE_V4, 0, 0x46, 0 },
	{ "IPv4 IHL below minimum", ICRC_BASE_V4, 0, 0x44, 0 },
	{ "IPv4 carrying TCP", ICRC_BASE_V4, 9, IPPROTO_TCP, 0 },
	{ "IPv4 first fragment", ICRC_BASE_V4, 6, 0x20, 0 },
	{ "IPv4 later fragment", ICRC_BASE_V4, 7, 0x08, 0 },
	{ "IPv4 total length past the buffer", ICRC_BASE_V4, 3, 76 + 1, 0 },
	{ "IPv4 total length short of UDP", ICRC_BASE_V4, 3, 76 - 1, 0 },
	{ "UDP length past the IP packet", ICRC_BASE_V4, 25, 56 + 1, 0 },
	{ "UDP too short for BTH and ICRC", ICRC_BASE_V4, 25, 23, 0 },
	{ "IPv6 carrying TCP", ICRC_BASE_V6, 6, IPPROTO_TCP, 0 },
	{ "IPv6 hop-by-hop options", ICRC_BASE_V6, 6, 0, 0 },
	{ "IPv6 payload length past the buffer", ICRC_BASE_V6, 5, 32 + 1, 0 },
	{ "IPv6 UDP too short", ICRC_BASE_V6, 45, 20, 0 },
};

static void icrc_bad_desc(const struct icrc_bad_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(icrc_bad, icrc_bad_cases, icrc_bad_desc);

/*
 * Malformed or truncated packets are refused by every entry point, which
 * leaves the buffer alone. Short packets get a buffer of exactly their
 * length, so that KASAN, when enabled, catches any read past it.
 */
static void icrc_bad_test(struct kunit *test)
{
	const struct icrc_bad_case *t = test->param_value;
	const struct icrc_vector *v = &icrc_vectors[t->base];
	unsigned int len = v->len + t->len;
	u8 *good, *pkt, *copy;
	struct sk_buff *skb;
	u32 icrc;

	/* Start from the good packet, its ICRC in place. */
	good = icrc_packet(test, v, 0);
	KUNIT_ASSERT_EQ(test, sroce_icrc_fill(good, v->len), 0);
	pkt = kunit_kmalloc(test, len ?: 1, GFP_KERNEL);
	copy = kunit_kmalloc(test, len ?: 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pkt);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, copy);
	memcpy(pkt, good, len);
	if (t->off >= 0)
		pkt[t->off] = t->val;
	memcpy(copy, pkt, len);

	KUNIT_EXPECT_LT(test, sroce_icrc_calc(pkt, len, &icrc), 0);
	KUNIT_EXPECT_FALSE(test, sroce_icrc_valid(pkt, len));
	KUNIT_EXPECT_LT(test, sroce_icrc_fill(pkt, len), 0);
	KUNIT_EXPECT_EQ(test, memcmp(pkt, copy, len), 0);

	skb = alloc_skb(len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, pkt, len);
	skb_reset_network_header(skb);
	KUNIT_EXPECT_LT(test, sroce_icrc_skb_check(skb), 0);
	KUNIT_EXPECT_NE(test, sroce_icrc_skb_check(skb), -EBADMSG);
	KUNIT_EXPECT_LT(test, sroce_icrc_skb_fill(skb), 0);
	kfree_skb(skb);
}

/* Bit by bit, as IEEE 802.3 defines it: the reference for both engines. */
static u32 icrc_ref_crc32_le(u32 crc, const u8 *p, size_t len)
{
	int bit;

	while (len--) {
		crc ^= *p++;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (crc & 1 ? 0xedb88320 : 0);
	}
	return crc;
}

struct icrc_engine_case {
	unsigned int len;
	unsigned int misalign;
	u32 seed;
};

/* Around the 64-byte and 16-byte thresholds of the PCLMUL code. */
static const struct icrc_engine_case icrc_engine_cases[] = {
	{ 0, 0, ~0U }, { 1, 0, ~0U }, { 3, 1, 0 }, { 8, 0, 0xdebb20e3 },
	{ 15, 3, ~0U }, { 16, 0, 0x12345678 }, { 63, 0, ~0U },
	{ 64, 0, ~0U }, { 79, 1, 0 }, { 80, 0, ~0U }, { 81, 7, ~0U },
	{ 128, 8, 0xdebb20e3 }, { 1000, 5, ~0U }, { 4096, 0, ~0U },
	{ 4097, 3, 0xa5a5a5a5 },
};

static void icrc_engine_desc(const struct icrc_engine_case *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u bytes at +%u, seed %#x",
		 t->len, t->misalign, t->seed);
}

KUNIT_ARRAY_PARAM(icrc_engine, icrc_engine_cases, icrc_engine_desc);

/* Both engines compute crc32_le(), running CRC and alignment included. */
static void icrc_engine_test(struct kunit *test)
{
	const struct icrc_engine_case *t = test->param_value;
	u8 *buf = kunit_kmalloc(test, t->len + t->misalign + 1, GFP_KERNEL);
	u8 *p = buf + t->misalign;
	unsigned int i;
	u32 want;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	for (i = 0; i < t->len; i++)
		p[i] = i * 167 + (i >> 8) + 11;
	want = icrc_ref_crc32_le(t->seed, p, t->len);

	KUNIT_EXPECT_EQ(test, sroce_crc32(SROCE_CRC_LIB, t->seed, p, t->len),
			want);
	if (!sroce_crc_engine_ready(SROCE_CRC_SHASH))
		kunit_skip(test, "no crc32 shash");
	KUNIT_EXPECT_EQ(test, sroce_crc32(SROCE_CRC_SHASH, t->seed, p, t->len),
			want);
	/* A CRC continued over two calls equals one over the whole. */
	KUNIT_EXPECT_EQ(test,
			sroce_crc32(SROCE_CRC_SHASH,
				    sroce_crc32(SROCE_CRC_LIB, t->seed, p,
						t->len / 2),
				    p + t->len / 2, t->len - t->len / 2),
			want);
}

/*
 * The eight 0xff bytes that stand in for the LRH give the seed rdma_rxe
 * starts from; both engines must agree on it.
 */
static void icrc_seed_test(struct kunit *test)
{
	static const u8 lrh[8] = { 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 0xff, 0xff };
	unsigned int i;

	KUNIT_EXPECT_EQ(test, icrc_ref_crc32_le(~0U, lrh, sizeof(lrh)),
			0xdebb20e3);
	for (i = 0; i < ARRAY_SIZE(icrc_engines); i++)
		if (sroce_crc_engine_ready(icrc_engines[i]))
			KUNIT_EXPECT_EQ(test, sroce_crc32(icrc_engines[i], ~0U,
							  lrh, sizeof(lrh)),
					0xdebb20e3);
}

static struct kunit_case sroce_icrc_test_cases[] = {
	KUNIT_CASE_PARAM(icrc_vector_calc_test, icrc_vector_gen_params),
	KUNIT_CASE_PARAM(icrc_vector_fill_test, icrc_vector_gen_params),
	KUNIT_CASE_PARAM(icrc_skb_test, icrc_vector_gen_params),
	KUNIT_CASE_PARAM(icrc_field_test, icrc_field_gen_params),
	KUNIT_CASE_PARAM(icrc_bad_test, icrc_bad_gen_params),
	KUNIT_CASE_PARAM(icrc_engine_test, icrc_engine_gen_params),
	KUNIT_CASE(icrc_seed_test),
	{}
};

static struct kunit_suite sroce_icrc_test_suite = {
	.name = "sroce_icrc",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_icrc_test_cases,
};

kunit_test_suites(&sroce_icrc_test_suite);
