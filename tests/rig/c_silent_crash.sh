#!/bin/sh
# SPDX-License-Identifier: MIT
# Rig self-test (make check-rig only): a program that dies without
# reporting a failure must still count as failed.
echo "ok - printed before dying"
kill -SEGV $$
