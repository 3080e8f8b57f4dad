#include "common/combine.h"
#include "common/error.h"

#include <string.h>

static _Thread_local moe_combiner *current_combiner;

moe_combiner *moe_combiner_enter(moe_combiner *combiner)
{
    moe_combiner *outer = current_combiner;
    current_combiner = combiner;
    return outer;
}

void moe_combiner_leave(moe_combiner *outer)
{
    current_combiner = outer;
}

double moe_combined_total_weight(const moe_data *data)
{
    const moe_combiner *combiner = current_combiner;
    if (combiner == NULL || combiner->function == NULL || !(combiner->total_weight > 0.0) ||
        data->n != combiner->n || data->X != combiner->X || data->y != combiner->y ||
        data->weights != combiner->weights)
        return 0.0;
    return combiner->total_weight;
}

int moe_combining(void)
{
    return current_combiner != NULL && current_combiner->function != NULL;
}

/* Once a failure ended the fit on every worker, each later request returns it unsent. */
static moe_status agreed_failure(const moe_combiner *combiner, char *message)
{
    return moe_fail(message, combiner->agreed, "%s", combiner->agreed_message);
}

static moe_status finish(moe_combiner *combiner, moe_status status, const char *message,
                         char *out)
{
    combiner->finished = 1;
    combiner->agreed = status;
    memcpy(combiner->agreed_message, message, MOE_MESSAGE_SIZE);
    combiner->agreed_message[MOE_MESSAGE_SIZE - 1] = '\0';
    return agreed_failure(combiner, out);
}

static moe_status send(moe_combiner *combiner, double *values, size_t count, moe_status local,
                       int has_row, size_t *failed_row, int final, char *message)
{
    char buffer[MOE_MESSAGE_SIZE];
    if (local == MOE_OK || has_row || message == NULL)
        buffer[0] = '\0';
    else
        memcpy(buffer, message, MOE_MESSAGE_SIZE);
    buffer[MOE_MESSAGE_SIZE - 1] = '\0';
    moe_combine_request request = {MOE_COMBINE_VERSION, values, count, local, has_row,
                                   has_row ? *failed_row : 0, final, buffer};
    combiner->requests++;
    moe_status transport = combiner->function(combiner->user, &request);
    if (transport != MOE_OK) {
        if (buffer[0] == '\0')
            moe_fail(buffer, transport, "the combine function failed: %s",
                     moe_strerror(transport));
        return finish(combiner, transport, buffer, message);
    }
    buffer[MOE_MESSAGE_SIZE - 1] = '\0';
    if (request.status == MOE_OK)
        return MOE_OK;
    if (request.final || final)
        return finish(combiner, request.status, buffer, message);
    if (request.has_row) {
        *failed_row = request.failed_row;
        return request.status;
    }
    return moe_fail(message, request.status, "%s", buffer);
}

moe_status moe_combine_pass(double *values, size_t count, moe_status local, int has_row,
                            size_t *failed_row, char *message)
{
    moe_combiner *combiner = current_combiner;
    if (combiner == NULL || combiner->function == NULL)
        return local;
    if (combiner->finished)
        return agreed_failure(combiner, message);
    return send(combiner, values, count, local, has_row, failed_row, 0, message);
}

moe_status moe_combine_sums(double *values, size_t count, char *message)
{
    size_t ignored = 0;
    return moe_combine_pass(values, count, MOE_OK, 0, &ignored, message);
}

moe_status moe_combine_final(moe_status local, char *message)
{
    moe_combiner *combiner = current_combiner;
    if (combiner == NULL || combiner->function == NULL)
        return local;
    if (combiner->finished)
        return agreed_failure(combiner, message);
    size_t ignored = 0;
    moe_status status = send(combiner, NULL, 0, local, 0, &ignored, 1, message);
    if (status != MOE_OK)
        return agreed_failure(combiner, message);
    return MOE_OK;
}
