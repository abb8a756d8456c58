/* The network a clgrad-train run trains, checked against its data and options before any
 * table (train_network.c). Each check prints what is wrong and returns 0 when it fails. */
#ifndef CLGRAD_TRAIN_NETWORK_H
#define CLGRAD_TRAIN_NETWORK_H

#include "train_args.h"

/* "clgrad-train: WHAT: the library's message in plain words" on stderr; returns 1. */
int train_fail(const char *what, clg_status st, const char *detail);
/* Whether --data DIR holds the subset as an image folder (DIR/train, DIR/test) rather than
 * as IDX files; the folder's path into path. */
int data_folder(const cli *c, const char *subset, char *path, size_t cap);

/* --resume with --net: --net may only name the checkpoint's own network. */
int resume_net_agrees(const cli *c, clg_ctx *ctx);
/* The network a run trains, for the plot's title, into out. */
void network_title(const cli *c, clg_ctx *ctx, char *out, size_t cap);
/* --summary of the network the other options name; the exit status. */
int print_summary(const cli *c, clg_ctx *ctx);
/* The input shape and the classes of the net against the training data. */
int net_fits_data(const cli *c, clg_net *net, clg_datastore *train);
/* The default network's output sized to the data's classes (*net replaced). */
int size_default_net(const cli *c, clg_net **net, size_t classes);
/* Every test class by name among the net's (folders), or no more classes than its (IDX). */
int test_classes_known(const cli *c, clg_net *net, clg_datastore *test);
/* --normalize: the input normalisation of net from the training images (fit), said unless
 * quiet. */
int normalise_from_data(const cli *c, clg_net *net, clg_datastore *fit);
/* A trained model for data of another class count: a new output layer (*net replaced), and
 * --base-lr-factor on the layers before it. */
int transfer(const cli *c, clg_net **net, size_t classes);

#endif
