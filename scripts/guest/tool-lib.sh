# SPDX-License-Identifier: MIT
#
# Helpers of the ionctl tests (tests/guest/tool_*.sh), sourced after
# /etc/rig-lib.sh: a scratch directory, running ionctl with its output in $T (the caller's
# scratch directory), checking results, a JSON validator (busybox has no
# jq or python), and reading debugfs files.

# tool_scratch <name>: $T, a scratch directory /tmp/<name>.<pid>, removed
# at exit after the background processes whose pids the test keeps in
# $pids are sent SIGTERM and waited for.
tool_scratch() {
	T=/tmp/$1.$$
	mkdir -p $T
	pids=""
	trap tool_cleanup EXIT
}

tool_cleanup() {
	for p in $pids; do kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf $T
}

# run <args...>: ionctl's stdout in $T/out, stderr in $T/err, status in $rc.
run() {
	ionctl "$@" > $T/out 2> $T/err
	rc=$?
}

# expect_rc <want> <case>: the last run exited with <want>.
expect_rc() {
	want=$1
	shift
	if [ "$rc" = "$want" ]; then
		ok "$*"
	else
		diag "exit status $rc, want $want; stderr: $(head -c 300 $T/err)"
		not_ok "$*"
	fi
}

# json_valid <file>: the file is one JSON value (RFC 8259 grammar, no
# escapes checked beyond \x), nothing after it.
json_valid() {
	awk '
	function ws() { while (pos <= n && index(" \t\r\n", substr(s, pos, 1))) pos++ }
	function str(   c) {
		if (substr(s, pos, 1) != "\"") return 0
		pos++
		while (pos <= n) {
			c = substr(s, pos, 1)
			if (c == "\\") pos += 2
			else if (c == "\"") { pos++; return 1 }
			else pos++
		}
		return 0
	}
	function val(   c, r) {
		ws()
		c = substr(s, pos, 1)
		if (c == "{") return items("}", 1)
		if (c == "[") return items("]", 0)
		if (c == "\"") return str()
		r = substr(s, pos)
		if (match(r, /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/)) {
			pos += RLENGTH
			return 1
		}
		if (substr(r, 1, 4) == "true" || substr(r, 1, 4) == "null") { pos += 4; return 1 }
		if (substr(r, 1, 5) == "false") { pos += 5; return 1 }
		return 0
	}
	# An object (keyed: "key": value members) or an array, up to end.
	function items(end, keyed,   c) {
		pos++
		ws()
		if (substr(s, pos, 1) == end) { pos++; return 1 }
		for (;;) {
			if (keyed) {
				ws()
				if (!str()) return 0
				ws()
				if (substr(s, pos, 1) != ":") return 0
				pos++
			}
			if (!val()) return 0
			ws()
			c = substr(s, pos, 1)
			pos++
			if (c == end) return 1
			if (c != ",") return 0
		}
	}
	{ s = s $0 "\n" }
	END {
		n = length(s)
		pos = 1
		good = val()
		ws()
		exit !(good && pos > n)
	}' "$1"
}

# json_obj <file> <"key": value>: the JSON objects (one per line, without
# braces) that contain that exact member.
json_obj() {
	tr '{}' '\n\n' < "$1" | grep -E "(^|, )$2(,|\$)"
}

# json_get <line> <key>: the raw value of "key" in an object line.
json_get() {
	echo "$1" | sed -nE "s/.*\"$2\": (\"[^\"]*\"|[^,}]*).*/\1/p" | head -n1
}

# dfs_key <file> <key>: a "key: value" line of a debugfs file.
dfs_key() { sed -n "s/^$2: //p" "$1" | head -n1; }

# dfs_cell <file> <column> <value> <column2>: column2 of the table row
# whose column reads value.
dfs_cell() {
	awk -F'\t' -v k="$2" -v v="$3" -v c="$4" '
		!t { if ($0 == "") t = 1; next }
		t == 1 { for (i = 1; i <= NF; i++) h[$i] = i; t = 2; next }
		$h[k] == v { print $h[c]; exit }' "$1"
}

# wait_for <file> <pattern>: until the file has a matching line (a hang
# guard of 30 s, not a timing check).
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "$2" "$1"
}
