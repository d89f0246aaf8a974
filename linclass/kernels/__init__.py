"""Kernel methods: models that score through ``k(x, x')`` instead of explicit features.

``pairwise`` computes kernel matrices (linear, polynomial, Gaussian/RBF,
sigmoid) and holds what the kernel models share; ``svc`` is the SVM trained by
SMO; ``kernel_perceptron`` the dual perceptron; ``mercer`` the Nystroem
feature map that turns a kernel into features for the linear family.

May import: ``linclass._core``, ``linclass._validation``, ``linclass.base``,
``linclass.exceptions``.  The linear family and the structured tasks do not
import from here except through these public names.
"""
from .kernel_perceptron import KernelPerceptron
from .mercer import MERCER_KERNELS, MercerMap, kernel_matrix
from .pairwise import (KERNEL_NAMES, linear_kernel, pairwise_kernels, polynomial_kernel,
                       rbf_kernel, sigmoid_kernel)
from .svc import SVC

__all__ = ["KERNEL_NAMES", "KernelPerceptron", "MERCER_KERNELS", "MercerMap", "SVC",
           "kernel_matrix", "linear_kernel", "pairwise_kernels", "polynomial_kernel",
           "rbf_kernel", "sigmoid_kernel"]
