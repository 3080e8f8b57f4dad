/* What the files of libmoe_mpi share (none of it is exported: lib/mpi/libmoe_mpi.map). */
#ifndef MOE_MPI_INTERNAL_H
#define MOE_MPI_INTERNAL_H

#include "moe/mpi.h"

enum { MESSAGE_SIZE = 512 };

/* moe_mpi_last_error's text emptied, as every call begins. */
void mpi_clear_error(void);

/* moe_mpi_last_error's text; returns status. */
moe_status mpi_fail(moe_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Every rank returns the status and message of `failing` (a rank), broadcast from it. */
moe_status mpi_share_failure(MPI_Comm comm, int failing, moe_status status,
                             const char *message);

/* Every rank learns whether any failed; the smallest failing rank's status and message. */
moe_status mpi_agree(MPI_Comm comm, int rank, moe_status status, const char *message);

/* Copy a model's parameters into another of the same structure. */
moe_status mpi_copy_parameters(moe_model_t *to, const moe_model_t *from);

/* The report moe_mpi_get_report gives on this thread. */
void mpi_set_report(const moe_mpi_report *report);

/* moe_mpi_fit with an "em" fitter, after the call's agreement (lib/mpi/exact_em.c). */
moe_status mpi_exact_em(MPI_Comm comm, int root, moe_fitter_t *fitter, moe_model_t *model,
                        size_t n, const double *X, size_t ldx, const double *y,
                        const double *weights, size_t support, double started);

#endif
