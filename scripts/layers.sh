#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Checks the driver's layer rule (Documentation/infiniband/sroce.rst,
# "Layers"). The driver has one folder per layer:
#
#   wire <- core <- {obj, mem} <- net <- transport <- top
#
# and a file includes its own folder and the folders below it, never one
# above; obj and mem do not include each other. An include of a driver
# header names its folder ("core/sroce_dev.h"); only the files at the top
# and the KUnit suites in tests/ (which may test any layer) include their
# own folder's headers, or the top's, without one. Every include that breaks the rule
# is printed as FILE:LINE. Then the folder graph the includes make is
# checked for a cycle, which the rule forbids.
#
# Exit status: 0 when every include follows the rule.

set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"
cd "$SROCE_TOP"

DRV=drivers/infiniband/sw/sroce

# The rank of each layer folder: a file may include a folder of a lower
# rank, or its own. obj and mem share a rank and may not include each
# other. The top folder (".") and tests/ are above every layer.
declare -A RANK=(
	[wire]=0 [core]=1 [obj]=2 [mem]=2 [net]=3 [transport]=4
	[.]=5 [tests]=6
)

bad=0
declare -A edges=()

# complain FILE LINE TEXT: print one broken include.
complain() {
	echo "$1:$2: $3" >&2
	bad=$((bad + 1))
}

# check_file FILE: check every quoted include of FILE.
check_file() {
	local file=$1 rel dir lineno inc target to

	rel=${file#"$DRV"/}
	dir=$(dirname "$rel")
	if [ -z "${RANK[$dir]:-}" ]; then
		complain "$file" 1 "is in $dir/, which is no layer of the driver"
		return
	fi
	while IFS=: read -r lineno inc; do
		inc=${inc#*\"}
		inc=${inc%%\"*}
		if [[ $inc != */* ]]; then
			# Without a folder: the file's own folder, top or tests only.
			if [ "${RANK[$dir]}" -lt 5 ]; then
				complain "$file" "$lineno" \
					"#include \"$inc\" must name its folder (\"$dir/$inc\")"
			elif [ ! -f "$DRV/$dir/$inc" ] && [ ! -f "$DRV/$inc" ]; then
				complain "$file" "$lineno" \
					"#include \"$inc\" is neither in $dir/ nor at the top"
			fi
			continue
		fi
		to=${inc%%/*}
		target=$DRV/$inc
		if [ -z "${RANK[$to]:-}" ] || [ "$to" = tests ] ||
		   [ ! -f "$target" ]; then
			complain "$file" "$lineno" \
				"#include \"$inc\" names no header of a layer folder"
			continue
		fi
		[ "$to" = "$dir" ] && continue
		if [ "${RANK[$to]}" -gt "${RANK[$dir]}" ]; then
			complain "$file" "$lineno" \
				"#include \"$inc\" goes up a layer ($dir -> $to)"
		elif [ "${RANK[$to]}" -eq "${RANK[$dir]}" ]; then
			complain "$file" "$lineno" \
				"#include \"$inc\": $dir and $to are independent layers"
		fi
		edges["$dir $to"]=1
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
}

mapfile -t files < <(git ls-files "$DRV/*.[ch]")
if [ "${#files[@]}" -eq 0 ]; then
	echo "layers: no source files under $DRV" >&2
	exit 1
fi
for f in "${files[@]}"; do
	check_file "$f"
done

# The folder graph, "includer included" a line: tsort reports a cycle.
graph=$(for e in "${!edges[@]}"; do echo "$e"; done | sort)
cycle=
if [ -n "$graph" ]; then
	cycle=$(tsort <<<"$graph" 2>&1 >/dev/null) || true
fi
if [ -n "$cycle" ]; then
	echo "layers: the folders include each other in a cycle:" >&2
	echo "$cycle" >&2
	bad=$((bad + 1))
fi

echo "layers: folder edges: $(echo "$graph" | paste -sd, - | sed 's/,/, /g')"
if [ "$bad" -ne 0 ]; then
	echo "layers: $bad broken includes in ${#files[@]} files" >&2
	exit 1
fi
echo "layers: ${#files[@]} files follow wire <- core <- {obj, mem} <- net <- transport <- top"
