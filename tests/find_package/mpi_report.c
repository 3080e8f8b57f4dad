/* Links moe::mpi alone (moe::moe and MPI come with it) and calls libmoe_mpi on one rank. */
#include <moe/moe.h>
#include <moe/mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    moe_mpi_report report;
    moe_status status;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    status = moe_mpi_report_init(&report, MOE_MPI_REPORT_VERSION);
    printf("libmoe %s, libmoe_mpi: moe_mpi_report_init %s\n", moe_version_string(),
           moe_strerror(status));
    MPI_Finalize();
    return status == MOE_OK ? 0 : 1;
}
