"""The public names of the Keras modules that scripts star-import (``from keras.layers import *``),
under their canonical names (``keras.layers``): how a name a star import brings is told from one
another star import brings, as Python does (each module binds only the names it defines).

The union of Keras 2 (``tf_keras``, ``tf.keras`` up to TensorFlow 2.15) and Keras 3, generated
from both packages' public names (``__all__``, else the names without a leading underscore).
"""

from typing import Dict, FrozenSet

KERAS_EXPORTS: Dict[str, FrozenSet[str]] = {
    "keras": frozenset("""
    DTypePolicy FloatDTypePolicy Function Initializer Input InputSpec KerasTensor Layer Loss
    Metric Model Operation Optimizer Quantizer Regularizer RematScope Sequential StatelessScope
    SymbolicScope Variable activations applications backend callbacks config constraints
    datasets device distillation distribution dtensor dtype_policies estimator experimental
    export initializers layers legacy losses metrics mixed_precision models name_scope ops
    optimizers preprocessing protobuf quantizers random regularizers remat saving src tree utils
    version visualization wrappers
    """.split()),
    "keras.layers": frozenset("""
    AbstractRNNCell Activation ActivityRegularization AdaptiveAveragePooling1D
    AdaptiveAveragePooling2D AdaptiveAveragePooling3D AdaptiveMaxPooling1D AdaptiveMaxPooling2D
    AdaptiveMaxPooling3D Add AdditiveAttention AlphaDropout Attention AugMix AutoContrast
    Average AveragePooling1D AveragePooling2D AveragePooling3D AvgPool1D AvgPool2D AvgPool3D
    BatchNormalization Bidirectional CategoryEncoding CenterCrop Concatenate
    ContrastLimitedAdaptiveHistogramEqualization Conv1D Conv1DTranspose Conv2D Conv2DTranspose
    Conv3D Conv3DTranspose ConvLSTM1D ConvLSTM2D ConvLSTM3D Convolution1D Convolution1DTranspose
    Convolution2D Convolution2DTranspose Convolution3D Convolution3DTranspose Cropping1D
    Cropping2D Cropping3D CutMix Dense DenseFeatures DepthwiseConv1D DepthwiseConv2D
    Discretization Dot Dropout ELU EinsumDense Embedding Equalization Flatten FlaxLayer GRU
    GRUCell GaussianDropout GaussianNoise GlobalAveragePooling1D GlobalAveragePooling2D
    GlobalAveragePooling3D GlobalAvgPool1D GlobalAvgPool2D GlobalAvgPool3D GlobalMaxPool1D
    GlobalMaxPool2D GlobalMaxPool3D GlobalMaxPooling1D GlobalMaxPooling2D GlobalMaxPooling3D
    GroupNormalization GroupQueryAttention HashedCrossing Hashing Identity Input InputLayer
    InputSpec IntegerLookup JaxLayer LSTM LSTMCell Lambda Layer LayerNormalization LeakyReLU
    LocallyConnected1D LocallyConnected2D Masking MaxNumBoundingBoxes MaxPool1D MaxPool2D
    MaxPool3D MaxPooling1D MaxPooling2D MaxPooling3D Maximum MelSpectrogram Minimum MixUp
    MultiHeadAttention Multiply Normalization PReLU Permute Pipeline RMSNormalization RNN
    RandAugment RandomBrightness RandomColorDegeneration RandomColorJitter RandomContrast
    RandomCrop RandomElasticTransform RandomErasing RandomFlip RandomGaussianBlur
    RandomGrayscale RandomHeight RandomHue RandomInvert RandomPerspective RandomPosterization
    RandomRotation RandomSaturation RandomSharpness RandomShear RandomTranslation RandomWidth
    RandomZoom ReLU RepeatVector Rescaling Reshape Resizing ReversibleEmbedding STFTSpectrogram
    SeparableConv1D SeparableConv2D SeparableConvolution1D SeparableConvolution2D SimpleRNN
    SimpleRNNCell Softmax Solarization SpatialDropout1D SpatialDropout2D SpatialDropout3D
    SpectralNormalization StackedRNNCells StringLookup Subtract TFSMLayer TextVectorization
    ThresholdedReLU TimeDistributed TorchModuleWrapper UnitNormalization UpSampling1D
    UpSampling2D UpSampling3D Wrapper ZeroPadding1D ZeroPadding2D ZeroPadding3D add average
    concatenate deserialize dot experimental maximum minimum multiply serialize subtract
    """.split()),
    "keras.models": frozenset("""
    Model Sequential clone_model experimental load_model model_from_config model_from_json
    model_from_yaml save_model
    """.split()),
    "keras.optimizers": frozenset("""
    Adadelta Adafactor Adagrad Adam AdamW Adamax Ftrl Lamb Lion LossScaleOptimizer
    MultiOptimizer Muon Nadam Optimizer OptimizerMap RMSprop SGD ScheduleFreeAdamW deserialize
    experimental get legacy schedules serialize
    """.split()),
    "keras.callbacks": frozenset("""
    BackupAndRestore BaseLogger CSVLogger Callback CallbackList EarlyStopping History
    LambdaCallback LearningRateScheduler ModelCheckpoint OrbaxCheckpoint ProgbarLogger
    ReduceLROnPlateau RemoteMonitor SidecarEvaluatorModelExport SwapEMAWeights TensorBoard
    TerminateOnNaN experimental
    """.split()),
    "keras.losses": frozenset("""
    BinaryCrossentropy BinaryFocalCrossentropy CTC CategoricalCrossentropy
    CategoricalFocalCrossentropy CategoricalGeneralizedCrossEntropy CategoricalHinge Circle
    CosineSimilarity Dice Hinge Huber KLD KLDivergence LogCosh Loss MAE MAPE MSE MSLE
    MeanAbsoluteError MeanAbsolutePercentageError MeanSquaredError MeanSquaredLogarithmicError
    Poisson Reduction SparseCategoricalCrossentropy SquaredHinge Tversky binary_crossentropy
    binary_focal_crossentropy categorical_crossentropy categorical_focal_crossentropy
    categorical_generalized_cross_entropy categorical_hinge circle cosine_similarity ctc
    deserialize dice get hinge huber kl_divergence kld kullback_leibler_divergence log_cosh
    logcosh mae mape mean_absolute_error mean_absolute_percentage_error mean_squared_error
    mean_squared_logarithmic_error mse msle poisson serialize sparse_categorical_crossentropy
    squared_hinge tversky
    """.split()),
    "keras.metrics": frozenset("""
    AUC Accuracy BinaryAccuracy BinaryCrossentropy BinaryIoU CategoricalAccuracy
    CategoricalCrossentropy CategoricalHinge ConcordanceCorrelation CosineSimilarity F1Score
    FBetaScore FalseNegatives FalsePositives Hinge IoU KLD KLDivergence LogCoshError MAE MAPE
    MSE MSLE Mean MeanAbsoluteError MeanAbsolutePercentageError MeanIoU MeanMetricWrapper
    MeanRelativeError MeanSquaredError MeanSquaredLogarithmicError MeanTensor Metric OneHotIoU
    OneHotMeanIoU PearsonCorrelation Poisson Precision PrecisionAtRecall R2Score Recall
    RecallAtPrecision RootMeanSquaredError SensitivityAtSpecificity SparseCategoricalAccuracy
    SparseCategoricalCrossentropy SparseTopKCategoricalAccuracy SpecificityAtSensitivity
    SquaredHinge Sum TopKCategoricalAccuracy TrueNegatives TruePositives binary_accuracy
    binary_crossentropy binary_focal_crossentropy categorical_accuracy categorical_crossentropy
    categorical_focal_crossentropy categorical_hinge concordance_correlation deserialize
    experimental get hinge huber kl_divergence kld kullback_leibler_divergence log_cosh logcosh
    mae mape mean_absolute_error mean_absolute_percentage_error mean_squared_error
    mean_squared_logarithmic_error mse msle pearson_correlation poisson serialize
    sparse_categorical_accuracy sparse_categorical_crossentropy
    sparse_top_k_categorical_accuracy squared_hinge top_k_categorical_accuracy
    """.split()),
    "keras.utils": frozenset("""
    Config CustomObjectScope FeatureSpace GeneratorEnqueuer OrderedEnqueuer Progbar PyDataset
    Sequence SequenceEnqueuer SidecarEvaluator StepsPerExecutionTuner TimedThread array_to_img
    audio_dataset_from_directory bounding_boxes clear_session custom_object_scope
    deserialize_keras_object disable_interactive_logging enable_interactive_logging experimental
    get_custom_objects get_file get_registered_name get_registered_object get_source_inputs
    image_dataset_from_directory img_to_array is_interactive_logging_enabled is_keras_tensor
    legacy load_img model_to_dot normalize pack_x_y_sample_weight pad_sequences plot_model
    register_keras_serializable save_img serialize_keras_object set_random_seed split_dataset
    standardize_dtype text_dataset_from_directory timeseries_dataset_from_array to_categorical
    to_ordinal unpack_x_y_sample_weight warmstart_embedding_matrix
    """.split()),
    "keras.regularizers": frozenset("""
    L1 L1L2 L2 OrthogonalRegularizer Regularizer deserialize get l1 l1_l2 l2
    orthogonal_regularizer serialize
    """.split()),
    "keras.initializers": frozenset("""
    Constant GlorotNormal GlorotUniform HeNormal HeUniform Identity IdentityInitializer
    Initializer LecunNormal LecunUniform Ones Orthogonal OrthogonalInitializer RandomNormal
    RandomUniform STFT STFTInitializer TruncatedNormal VarianceScaling Zeros constant
    deserialize get glorot_normal glorot_uniform he_normal he_uniform identity lecun_normal
    lecun_uniform ones orthogonal random_normal random_uniform serialize stft truncated_normal
    variance_scaling zeros
    """.split()),
    "keras.activations": frozenset("""
    celu deserialize elu exponential gelu get glu hard_shrink hard_sigmoid hard_silu hard_swish
    hard_tanh leaky_relu linear log_sigmoid log_softmax mish relu relu6 selu serialize sigmoid
    silu soft_shrink softmax softplus softsign sparse_plus sparse_sigmoid sparsemax squareplus
    swish tanh tanh_shrink threshold
    """.split()),
    "keras.applications": frozenset("""
    ConvNeXtBase ConvNeXtLarge ConvNeXtSmall ConvNeXtTiny ConvNeXtXLarge DenseNet121 DenseNet169
    DenseNet201 EfficientNetB0 EfficientNetB1 EfficientNetB2 EfficientNetB3 EfficientNetB4
    EfficientNetB5 EfficientNetB6 EfficientNetB7 EfficientNetV2B0 EfficientNetV2B1
    EfficientNetV2B2 EfficientNetV2B3 EfficientNetV2L EfficientNetV2M EfficientNetV2S
    InceptionResNetV2 InceptionV3 MobileNet MobileNetV2 MobileNetV3Large MobileNetV3Small
    NASNetLarge NASNetMobile RegNetX002 RegNetX004 RegNetX006 RegNetX008 RegNetX016 RegNetX032
    RegNetX040 RegNetX064 RegNetX080 RegNetX120 RegNetX160 RegNetX320 RegNetY002 RegNetY004
    RegNetY006 RegNetY008 RegNetY016 RegNetY032 RegNetY040 RegNetY064 RegNetY080 RegNetY120
    RegNetY160 RegNetY320 ResNet101 ResNet101V2 ResNet152 ResNet152V2 ResNet50 ResNet50V2
    ResNetRS101 ResNetRS152 ResNetRS200 ResNetRS270 ResNetRS350 ResNetRS420 ResNetRS50 VGG16
    VGG19 Xception convnext densenet efficientnet efficientnet_v2 imagenet_utils
    inception_resnet_v2 inception_v3 mobilenet mobilenet_v2 mobilenet_v3 nasnet regnet resnet
    resnet50 resnet_rs resnet_v2 vgg16 vgg19 xception
    """.split()),
    "keras.preprocessing.image": frozenset("""
    DirectoryIterator ImageDataGenerator Iterator NumpyArrayIterator apply_affine_transform
    apply_brightness_shift apply_channel_shift array_to_img img_to_array load_img
    random_brightness random_channel_shift random_rotation random_shear random_shift random_zoom
    save_img smart_resize
    """.split()),
    "keras.datasets": frozenset("""
    boston_housing california_housing cifar10 cifar100 fashion_mnist imdb mnist reuters
    """.split()),
}
