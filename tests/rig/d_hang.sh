#!/bin/sh
# SPDX-License-Identifier: MIT
# Rig self-test (make check-rig only): a program that never finishes is
# killed at the per-program time limit and counted as failed.
echo "ok - started"
sleep 600
