# CMake generated Testfile for 
# Source directory: /work/wt-t
# Build directory: /work/wt-t/build2
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("programs")
subdirs("tests")
subdirs("bench")
