# CMake generated Testfile for 
# Source directory: /work/wt-t/bench
# Build directory: /work/wt-t/build2/bench
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
