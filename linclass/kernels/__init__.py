"""Kernel methods: models that score through ``k(x, x')`` instead of explicit features.

``pairwise`` computes kernel matrices (linear, polynomial, Gaussian/RBF,
sigmoid) and holds what the kernel models share; ``svc`` is the SVM trained by
SMO; ``kernel_perceptron`` the dual perceptron; ``mercer`` the Nystroem
feature map that turns a kernel into features for the linear family;
``kernel_ridge`` and ``kernel_logistic`` the representer-theorem models
(kernel ridge regression/classification, kernel logistic regression) on the
shared basis of ``representer``; ``composition`` the kernel objects (sums,
products, scaling, cosine normalisation) and the Mercer check;
``string_kernels`` the spectrum and gap-weighted subsequence kernels over
strings and token sequences; ``multiclass_svm`` the kernelised multi-class
structural SVM (kernel Crammer--Singer, class descriptions, taxonomies) solved
in the dual.

May import: ``linclass._core``, ``linclass._validation``, ``linclass.base``,
``linclass.exceptions``, and ``linclass.joint`` (the class structures of the
multi-class structural SVM, public names only).  The linear family and the structured tasks do not
import from here except through these public names.
"""
from .composition import (Kernel, KernelFunction, NormalizedKernel, ProductKernel, ScaledKernel,
                          SumKernel, check_mercer, is_positive_semidefinite)
from .kernel_logistic import KernelLogisticRegression
from .kernel_perceptron import KernelPerceptron
from .kernel_ridge import KernelRidge, KernelRidgeClassifier
from .multiclass_svm import KernelMultiClassSVM
from .mercer import MERCER_KERNELS, MercerMap, kernel_matrix
from .pairwise import (KERNEL_NAMES, linear_kernel, pairwise_kernels, polynomial_kernel,
                       rbf_kernel, sigmoid_kernel)
from .string_kernels import SpectrumKernel, SubsequenceKernel
from .svc import SVC

__all__ = ["KERNEL_NAMES", "KernelPerceptron", "MERCER_KERNELS", "MercerMap", "SVC",
           "kernel_matrix", "linear_kernel", "pairwise_kernels", "polynomial_kernel",
           "rbf_kernel", "sigmoid_kernel", "Kernel", "KernelFunction", "NormalizedKernel",
           "ProductKernel", "ScaledKernel", "SumKernel", "check_mercer",
           "is_positive_semidefinite", "KernelLogisticRegression", "KernelRidge",
           "KernelRidgeClassifier", "SpectrumKernel", "SubsequenceKernel",
           "KernelMultiClassSVM"]
