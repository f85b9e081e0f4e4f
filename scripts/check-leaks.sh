#!/bin/sh
# Reads a sanitizer run's output (file $1) and fails if any LeakSanitizer report has a frame in
# cfx's own code. Needed because Criterion runs each test in a worker process whose leak
# report does not change the run's exit status, while libcriterion's own runner occasionally
# leaks a 48-byte block of its own (no cfx frame), which must not fail the build.
awk '
/ERROR: LeakSanitizer/      { inrep = 1; next }
inrep && /^SUMMARY:/        { inrep = 0; next }
inrep && / in .* (dispatch|ir|tracer|hop|codegen|tools|tests)\/[^ ]*\.[ch]:[0-9]+/ { bad++ ; print "cfx leak frame: " $0 }
END                         { if (bad) { print "make asan: LeakSanitizer found leaks in cfx code"; exit 1 } }
' "$1"
