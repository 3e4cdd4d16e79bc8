// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce address vectors (of connected QPs and of address handles) and
 * address handles.
 *
 * Address handles are created and destroyed in any context: the IB CM
 * makes them with RDMA_CREATE_AH_SLEEPABLE clear, possibly with
 * interrupts off. So the ah_num index is an xarray whose lock is taken
 * with interrupts saved, allocation falls back to GFP_ATOMIC, and a user
 * UD WQE resolves its AH by copying the AV out under that lock rather
 * than by holding a reference: destroy never has to wait.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/xarray.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "core/sroce_dev.h"
#include "core/sroce_port.h"
#include "obj/sroce_ah.h"

/**
 * sroce_av_from_attr() - build an address vector from an ib_core AH attr
 * @av: the AV to fill
 * @attr: a RoCE AH attribute with a GRH and a source GID attribute, as
 *	ib_core hands them to create_ah and modify_qp(IB_QP_AV)
 *
 * Context: any (takes the RCU read lock for the GID's netdev).
 *
 * Return: 0, or -EINVAL if @attr is not a RoCEv2 address with a GRH on
 * port 1.
 */
int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	const struct ib_gid_attr *sgid_attr = grh->sgid_attr;
	struct net_device *ndev;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(attr) != SROCE_PORT_NUM || !sgid_attr ||
	    sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->network_type = rdma_gid_attr_network_type(sgid_attr);
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label;
	av->sl = rdma_ah_get_sl(attr);
	av->static_rate = rdma_ah_get_static_rate(attr);
	ether_addr_copy(av->dmac, attr->roce.dmac);
	av->sgid = sgid_attr->gid;
	av->dgid = grh->dgid;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);
	av->ifindex = IS_ERR(ndev) ? 0 : ndev->ifindex;
	rcu_read_unlock();

	rdma_gid2ip((struct sockaddr *)&av->saddr, &av->sgid);
	rdma_gid2ip((struct sockaddr *)&av->daddr, &av->dgid);
	if (av->network_type == RDMA_NETWORK_IPV4 &&
	    (av->saddr.in4.sin_family != AF_INET ||
	     av->daddr.in4.sin_family != AF_INET))
		return -EINVAL;	/* an IPv4 source needs an IPv4 peer */
	return 0;
}

/**
 * sroce_av_to_attr() - the AH attribute an address vector was built from
 * @av: the AV
 * @attr: filled for query_qp/query_ah; without a source GID attribute,
 *	which query callers do not take a reference on
 */
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, SROCE_PORT_NUM);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_static_rate(attr, av->static_rate);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

static int sroce_ah_reserve(struct sroce_dev *sdev, struct sroce_ah *ah,
			    gfp_t gfp)
{
	unsigned long flags;
	int err;

	xa_lock_irqsave(&sdev->ahs, flags);
	err = __xa_alloc_cyclic(&sdev->ahs, &ah->ah_num, NULL,
				XA_LIMIT(1, SROCE_MAX_AH_NUM), &sdev->next_ah,
				gfp);
	xa_unlock_irqrestore(&sdev->ahs, flags);
	return err < 0 ? err : 0;
}

static void sroce_ah_publish(struct sroce_dev *sdev, struct sroce_ah *ah)
{
	unsigned long flags;

	/* The slot is reserved: storing into it allocates nothing. */
	xa_lock_irqsave(&sdev->ahs, flags);
	__xa_store(&sdev->ahs, ah->ah_num, ah, GFP_ATOMIC);
	xa_unlock_irqrestore(&sdev->ahs, flags);
}

static void sroce_ah_unpublish(struct sroce_dev *sdev, struct sroce_ah *ah)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ahs, flags);
	__xa_erase(&sdev->ahs, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ahs, flags);
}

/**
 * sroce_create_ah() - ib_device_ops.create_ah and .create_user_ah
 * @ibah: the AH ib_core allocated
 * @init_attr: the address (dmac and GID attribute resolved by ib_core)
 *	and RDMA_CREATE_AH_SLEEPABLE
 * @udata: for user AHs, room for struct rxe_create_ah_resp
 *
 * Context: any when RDMA_CREATE_AH_SLEEPABLE is clear, else may sleep.
 *
 * Return: 0; -EINVAL for an address that is not RoCEv2 on port 1 or a
 * user response buffer too small for the ah_num (sroce does not support
 * the old protocol of address vectors inside WQEs); -ENOMEM when the
 * device has its maximum of AHs or memory is short.
 */
static int sroce_create_ah(struct ib_ah *ibah,
			   struct rdma_ah_init_attr *init_attr,
			   struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibah->device);
	struct sroce_ah *ah = to_sroce_ah(ibah);
	gfp_t gfp = init_attr->flags & RDMA_CREATE_AH_SLEEPABLE ?
		    GFP_KERNEL : GFP_ATOMIC;
	struct rxe_create_ah_resp resp = {};
	int err;

	if (udata && (udata->inlen || udata->outlen < sizeof(resp)))
		return -EINVAL;
	err = sroce_av_from_attr(&ah->av, init_attr->ah_attr);
	if (err)
		return err;
	err = sroce_res_get(&sdev->res.ah, sdev->attr.max_ah);
	if (err)
		return err;
	err = sroce_ah_reserve(sdev, ah, gfp);
	if (err)
		goto err_put_count;

	if (udata) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_unreserve;
	}
	sroce_ah_publish(sdev, ah);
	return 0;

err_unreserve:
	sroce_ah_unpublish(sdev, ah);
err_put_count:
	sroce_res_put(&sdev->res.ah);
	return err;
}

/**
 * sroce_query_ah() - ib_device_ops.query_ah
 * @ibah: the AH
 * @attr: filled with its address
 *
 * Return: 0.
 */
static int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	sroce_av_to_attr(&to_sroce_ah(ibah)->av, attr);
	return 0;
}

/**
 * sroce_destroy_ah() - ib_device_ops.destroy_ah
 * @ibah: the AH
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or 0; never needed, nothing waits
 *
 * A UD WQE still in a send queue that names this AH by number fails when
 * it is processed, as if the number had never existed.
 *
 * Return: 0.
 */
static int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sroce_dev(ibah->device);

	sroce_ah_unpublish(sdev, to_sroce_ah(ibah));
	sroce_res_put(&sdev->res.ah);
	return 0;
}

/**
 * sroce_ah_get_av() - the address vector of a user AH, by number
 * @sdev: the device
 * @ah_num: the number from a UD send WQE
 * @pd: the PD of the QP sending; the AH must belong to it
 * @av: filled with a copy of the AH's address vector
 *
 * Context: any.
 *
 * Return: 0, or -EINVAL when no AH has that number or it belongs to
 * another PD.
 */
int sroce_ah_get_av(struct sroce_dev *sdev, u32 ah_num, struct ib_pd *pd,
		    struct sroce_av *av)
{
	struct sroce_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&sdev->ahs, flags);
	ah = xa_load(&sdev->ahs, ah_num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		err = 0;
	}
	xa_unlock_irqrestore(&sdev->ahs, flags);
	return err;
}

/* The verbs on address handles, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_ah_verbs = {
	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	.create_ah = sroce_create_ah,
	.create_user_ah = sroce_create_ah,
	.query_ah = sroce_query_ah,
	.destroy_ah = sroce_destroy_ah,
};
