# CMake generated Testfile for 
# Source directory: /work/wt-t/tests/fuzz
# Build directory: /work/wt-t/build2/tests/fuzz
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test(fuzz_csv "/work/wt-t/build2/tests/fuzz/fuzz_csv_replay" "/work/wt-t/tests/fuzz/corpus/csv")
set_tests_properties(fuzz_csv PROPERTIES  ENVIRONMENT "OPENBLAS_NUM_THREADS=1;CK_TIMEOUT_MULTIPLIER=1" LABELS "unit" TIMEOUT "300" _BACKTRACE_TRIPLES "/work/wt-t/tests/fuzz/CMakeLists.txt;94;add_test;/work/wt-t/tests/fuzz/CMakeLists.txt;105;moe_add_fuzz_harness;/work/wt-t/tests/fuzz/CMakeLists.txt;0;")
add_test(fuzz_loader "/work/wt-t/build2/tests/fuzz/fuzz_loader_replay" "/work/wt-t/tests/fuzz/corpus/loader")
set_tests_properties(fuzz_loader PROPERTIES  ENVIRONMENT "OPENBLAS_NUM_THREADS=1;CK_TIMEOUT_MULTIPLIER=1" LABELS "unit" TIMEOUT "300" _BACKTRACE_TRIPLES "/work/wt-t/tests/fuzz/CMakeLists.txt;94;add_test;/work/wt-t/tests/fuzz/CMakeLists.txt;113;moe_add_fuzz_harness;/work/wt-t/tests/fuzz/CMakeLists.txt;0;")
add_test(fuzz_state "/work/wt-t/build2/tests/fuzz/fuzz_state_replay" "/work/wt-t/tests/fuzz/corpus/state")
set_tests_properties(fuzz_state PROPERTIES  ENVIRONMENT "OPENBLAS_NUM_THREADS=1;CK_TIMEOUT_MULTIPLIER=1" LABELS "unit" TIMEOUT "300" _BACKTRACE_TRIPLES "/work/wt-t/tests/fuzz/CMakeLists.txt;94;add_test;/work/wt-t/tests/fuzz/CMakeLists.txt;119;moe_add_fuzz_harness;/work/wt-t/tests/fuzz/CMakeLists.txt;0;")
