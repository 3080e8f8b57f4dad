/* Wall time for reports. */
#ifndef MOE_LIB_CLOCK_H
#define MOE_LIB_CLOCK_H

/* Seconds of a monotonic clock (only differences mean anything). */
double moe_now_seconds(void);

#endif
