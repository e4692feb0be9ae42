import type { FieldType } from '../contracts.js';
import { enumType, multiselectType, selectType } from './choice-types.js';
import { dateOnlyType, datetimeType, timeType } from './date-types.js';
import { polymorphicType, relationshipType } from './relation-types.js';
import { booleanType, decimalType, integerType, numberType, stringType } from './scalar-types.js';
import { encryptedType, hashType } from './secret-types.js';
import { arrayType, objectType } from './structured-types.js';
import { colorType, emailType, fileType, imageType, slugType, urlType, uuidType } from './text-types.js';

/** The 24 core types of the spec, registered through `FieldsService.registerType` like any addon's. */
export const coreTypes: FieldType[] = [
  numberType, integerType, decimalType, stringType, urlType, uuidType, hashType, slugType, emailType,
  encryptedType, booleanType, datetimeType, dateOnlyType, timeType, enumType, selectType, multiselectType, arrayType, objectType,
  imageType, fileType, relationshipType, polymorphicType, colorType,
];
