# Shared by the command-line test scripts: counters, checks, and the closing line.
# The sourcing script sets W (a scratch folder) before calling expect_fail.
passed=0 failed=0 skipped=0

ok() {   # ok NAME STATUS: STATUS 0 passes
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1"; fi
}

skip() { skipped=$((skipped + 1)); echo "SKIP $1"; }

# expect_fail NAME CODE CMD...: exits with CODE and prints exactly one line on stderr.
expect_fail() {
    local name=$1 code=$2; shift 2
    "$@" >"$W/out.txt" 2>"$W/err.txt"
    local rc=$? lines
    lines=$(wc -l <"$W/err.txt")
    if [ "$rc" -ne "$code" ] || [ "$lines" -ne 1 ]; then
        echo "FAIL $name: exit $rc (wanted $code), $lines stderr line(s): $(head -c 300 "$W/err.txt")"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}

finish() {   # finish NAME: the closing line, and the exit status
    echo "$1: $passed passed, $failed failed, $skipped skipped"
    [ "$failed" -eq 0 ]
    exit
}
