"""Frame: the part of a data frame the estimators read (string `columns` and the values as an
array), so that the tests of column names run without pandas."""
import numpy as np


class Frame:
    def __init__(self, values, columns):
        self.values = np.asarray(values, dtype=np.float64)
        self.columns = list(columns)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self):
        return self.values.shape[0]

    @property
    def shape(self):
        return self.values.shape
