# Empty dependencies file for moe_bitwise_driver.
# This may be replaced when dependencies are built.
